package collect

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestReadFiles reads three files through one real shell, as a namespace or
// ssh target runs the batch: the two that exist come back byte for byte
// (a missing trailing newline too), the missing one is left out, and it took
// one process.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	a, b, gone := filepath.Join(dir, "snmp"), filepath.Join(dir, "it's stat"), filepath.Join(dir, "udp6")
	if err := os.WriteFile(a, []byte("Udp: InDatagrams RcvbufErrors\nUdp: 10 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("cpu 1 2 3"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := targettest.New("netns:x")
	h.Fallback = func(line string) (targettest.Answer, bool) {
		out, err := exec.Command("sh", "-c", line).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return targettest.Answer{Out: string(out), Code: ee.ExitCode()}, true
		}
		return targettest.Answer{Out: string(out)}, true
	}
	got := ReadFiles(context.Background(), h, a, b, gone)
	want := map[string][]byte{a: []byte("Udp: InDatagrams RcvbufErrors\nUdp: 10 2\n"), b: []byte("cpu 1 2 3")}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got)\n%s", d)
	}
	if n := len(h.Ran()); n != 1 {
		t.Errorf("ran %d commands, want one batch: %q", n, h.Ran())
	}
}

// TestReadFilesWithoutShell falls back to the target's own reads when the
// batch cannot run.
func TestReadFilesWithoutShell(t *testing.T) {
	h := targettest.New("netns:x")
	h.Files["/proc/net/dev"] = "Inter-|\n"
	got := ReadFiles(context.Background(), h, "/proc/net/dev", "/proc/net/udp")
	if d := cmp.Diff(map[string][]byte{"/proc/net/dev": []byte("Inter-|\n")}, got); d != "" {
		t.Errorf("files (-want +got)\n%s", d)
	}
}
