package collect

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target"
)

// hostileCollection is what a collection from a hostile host came to: its
// error, its notes by source and the peak RSS of the process that ran it.
type hostileCollection struct {
	Err     string            `json:"err"`
	Notes   map[string]string `json:"notes"`
	PeakRSS int64             `json:"peak_rss_kib"`
}

// collectHostile collects this machine in a process of its own whose PATH
// starts with programs that print n bytes each, as a broken or hostile
// host's would, and reports what came of it.
func collectHostile(t *testing.T, printing map[string]int) hostileCollection {
	t.Helper()
	dir := t.TempDir()
	for prog, n := range printing {
		script := "#!/bin/sh\nhead -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' x\n"
		if err := os.WriteFile(filepath.Join(dir, prog), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileCollectionChild$")
	cmd.Env = append(os.Environ(), "WGPERF_HOSTILE_CHILD=1", "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var res hostileCollection
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	return res
}

// TestHostileCollectionChild is collectHostile's child: it collects this
// machine once and prints the outcome and its peak RSS as one JSON line.
func TestHostileCollectionChild(t *testing.T) {
	if os.Getenv("WGPERF_HOSTILE_CHILD") != "1" {
		t.Skip("run by collectHostile in a process of its own")
	}
	target.Path = os.Getenv("PATH") // the printing programs first, as collectHostile put them
	var res hostileCollection
	snap, err := Collect(context.Background(), target.Local(), Options{})
	if err != nil {
		res.Err = err.Error()
	}
	if snap != nil {
		res.Notes = map[string]string{}
		for _, n := range snap.Notes {
			res.Notes[n.Source] = n.Message
		}
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			res.PeakRSS, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	b, _ := json.Marshal(res)
	os.Stdout.Write(append(b, '\n'))
}

// TestCollectCapsHostileOutput is issue 30 item 4: a host printing 100 MiB
// where a collection expects a line (uname -r) or a ruleset (nft) costs a
// bounded amount of memory — about 140 MiB of peak RSS, where it cost 740 —
// and the collection says which command was cut.
func TestCollectCapsHostileOutput(t *testing.T) {
	const printed = 100 << 20
	res := collectHostile(t, map[string]int{"uname": printed})
	t.Logf("uname -r printing 100 MiB: %s; peak RSS %d MiB", res.Err, res.PeakRSS>>10)
	if !strings.Contains(res.Err, "uname -r: output cut: more than 32 MiB") || strings.Contains(res.Err, "\n") {
		t.Errorf("err = %q, want one line naming uname -r and the cut", res.Err)
	}
	res = collectHostile(t, map[string]int{"nft": printed})
	t.Logf("nft printing 100 MiB: note %q; peak RSS %d MiB", res.Notes["nft"], res.PeakRSS>>10)
	if res.Err != "" || !strings.HasPrefix(res.Notes["nft"], "output cut: more than 32 MiB from one command") {
		t.Errorf("err = %q, nft note %q: want the collection to name nft's cut output", res.Err, res.Notes["nft"])
	}
	if res.PeakRSS > 250<<10 {
		t.Errorf("peak RSS %d MiB, want at most 250", res.PeakRSS>>10)
	}
}

// TestCollectReadBudget: three sources printing 30 MiB each, every one below
// the cap of a command, together overdraw what one collection may read
// (MaxReadBytes, 64 MiB), and the notes say so.
func TestCollectReadBudget(t *testing.T) {
	res := collectHostile(t, map[string]int{"wg": 30 << 20, "ethtool": 30 << 20, "nft": 30 << 20})
	t.Logf("notes %q; peak RSS %d MiB", res.Notes, res.PeakRSS>>10)
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	spent := 0
	for _, src := range []string{"wg show", "ethtool -k", "nft"} {
		if strings.Contains(res.Notes[src], "the 64 MiB all commands of this collection may print together are spent") {
			spent++
		}
	}
	if spent == 0 {
		t.Errorf("notes %q: want one naming the source that overdrew the collection's 64 MiB", res.Notes)
	}
	if res.PeakRSS > 400<<10 {
		t.Errorf("peak RSS %d MiB, want at most 400", res.PeakRSS>>10)
	}
}
