package collect

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestReadFiles reads four files through one real shell, as a namespace or
// ssh target runs the batch: those that exist come back line for line (a
// missing trailing newline added, where one grep read them), a path with a
// colon in it byte for byte (grep's "path:line" could not tell it apart, so a
// cat reads it), the missing one is left out, and it took one process.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	a, b, gone := filepath.Join(dir, "snmp"), filepath.Join(dir, "it's stat"), filepath.Join(dir, "udp6")
	colon := filepath.Join(dir, "eth0:1")
	if err := os.WriteFile(a, []byte("Udp: InDatagrams RcvbufErrors\nUdp: 10 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("cpu 1 2 3"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(colon, []byte("1420"), 0o600); err != nil {
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
	got := ReadFiles(context.Background(), h, a, b, gone, colon)
	want := map[string][]byte{a: []byte("Udp: InDatagrams RcvbufErrors\nUdp: 10 2\n"), b: []byte("cpu 1 2 3\n"), colon: []byte("1420")}
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

// TestReadSample reads files and the firewall in one shell whose nft and
// iptables-save print what they printed on a recorded host (banIP's ICMP
// limit, iptables-nft), and gets the firewall ReadFirewallCounters builds
// from the same outputs, one command at a time.
func TestReadSample(t *testing.T) {
	bin := t.TempDir()
	tool := func(name, recorded string) {
		script := "#!/bin/sh\ncat " + shell.Quote(testutil.Testdata("collect", recorded)) + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tool("nft", "nft/ruleset-banip-iptables-nft.json")
	tool("iptables-save", "iptables/iptables-save-c.txt")
	for _, prog := range []string{"sh", "cat", "grep"} {
		path, err := exec.LookPath(prog)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	stat := filepath.Join(dir, "stat")
	if err := os.WriteFile(stat, []byte("cpu 1 2 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := targettest.New("netns:x")
	h.Fallback = func(line string) (targettest.Answer, bool) {
		cmd := exec.Command(filepath.Join(bin, "sh"), "-c", line)
		cmd.Env = []string{"PATH=" + bin} // no ip6tables-save: not installed
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return targettest.Answer{Out: string(out), Code: ee.ExitCode()}, true
		}
		return targettest.Answer{Out: string(out)}, true
	}
	files, fw, _ := ReadSample(context.Background(), h, false, stat)
	if string(files[stat]) != "cpu 1 2 3\n" || fw == nil {
		t.Fatalf("files %q, firewall %v", files, fw)
	}
	if n := len(h.Ran()); n != 1 {
		t.Errorf("ran %d commands, want one batch", n)
	}
	one := targettest.New("netns:y")
	one.On("nft -j list ruleset", string(testutil.ReadTestdata(t, "collect", "nft", "ruleset-banip-iptables-nft.json")))
	one.On("iptables-save -c", string(testutil.ReadTestdata(t, "collect", "iptables", "iptables-save-c.txt")))
	want, _ := ReadFirewallCounters(context.Background(), one)
	if d := cmp.Diff(want, fw); d != "" {
		t.Errorf("firewall (-one by one +batched)\n%s", d)
	}
	if len(fw.Rules) == 0 || !fw.Iptables {
		t.Errorf("firewall has %d rules, iptables %v: want both tools' rules", len(fw.Rules), fw.Iptables)
	}
}

// TestReadFilesGlob expands a glob in the target's shell, batched or not:
// each file it matches comes back under its own path, and a glob with a
// shell's quoting in it is not run.
func TestReadFilesGlob(t *testing.T) {
	dir := t.TempDir()
	for _, irq := range []string{"38", "39"} {
		if err := os.WriteFile(filepath.Join(dir, irq), []byte("msix\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]byte{filepath.Join(dir, "38"): []byte("msix\n"), filepath.Join(dir, "39"): []byte("msix\n")}
	realShell := func(line string) (targettest.Answer, bool) {
		out, err := exec.Command("sh", "-c", line).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return targettest.Answer{Out: string(out), Code: ee.ExitCode()}, true
		}
		return targettest.Answer{Out: string(out)}, true
	}
	batched := targettest.New("netns:x")
	batched.Fallback = realShell
	if d := cmp.Diff(want, ReadFiles(context.Background(), batched, filepath.Join(dir, "*"), filepath.Join(dir, "none-*"))); d != "" {
		t.Errorf("batched (-want +got)\n%s", d)
	}
	if n := len(batched.Ran()); n != 1 {
		t.Errorf("ran %d commands, want one batch", n)
	}
	// Without a shell to batch in, the glob is still the shell's.
	one := targettest.New("netns:y")
	one.On(shell.Join("sh", "-c", grepGlob(filepath.Join(dir, "*"))), dir+"/38:msix\n"+dir+"/39:msix\n")
	if d := cmp.Diff(want, ReadFiles(context.Background(), one, filepath.Join(dir, "*"))); d != "" {
		t.Errorf("one by one (-want +got)\n%s", d)
	}
	if isGlob(dir+"/*$(reboot)") || isGlob(dir+"/it's*") {
		t.Error("a glob with shell syntax in it would run")
	}
}
