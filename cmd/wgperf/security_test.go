package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/shell"
)

// TestMain lets tests run this binary as wgperf itself (WGPERF_TEST_MAIN=1),
// so each run starts with fresh flags, as a user's would.
func TestMain(m *testing.M) {
	if os.Getenv("WGPERF_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// wgperf runs the CLI with args and extra environment; it returns the exit
// status and standard error.
func wgperf(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "WGPERF_TEST_MAIN=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// TestFlagsRefuseNonsense is hole 7: values that parse but mean nothing are
// exit-3 errors on one line, before anything runs.
func TestFlagsRefuseNonsense(t *testing.T) {
	// Should a check ever regress, the fix runs still change nothing: no
	// findings, and a scratch root.
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"findings": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	safe := []string{"--from", empty, "--root", dir}
	for _, args := range [][]string{
		append([]string{"fix", "--host", ""}, safe...),
		{"fix", "rollback", "--host", "", "--root", dir},
		{"diagnose", "--host", ""},
		{"collect", "--host", ""},
		{"bench", "--server", ""},
		append([]string{"fix", "--host", "local", "--apply", "--confirm", "-60s"}, safe...),
		append([]string{"fix", "--host", "local", "--apply", "--confirm", "0s"}, safe...),
		{"diagnose", "--rate", "NaN"},
		{"diagnose", "--rate", "+Inf"},
		{"diagnose", "--rate", "1e20"},
		{"diagnose", "--rate", "-5"},
		{"diagnose", "--rtt", "-1ms"},
		{"diagnose", "--rtt", "2562047h"}, // issue 30 item 11: no upper bound, a buffer of 2^61 bytes
		{"diagnose", "--rtt", "10.001s"},
		{"bench", "--server", "local", "--udp", "NaN"},
		{"exporter", "--interval", "0s"},
	} {
		code, stderr := wgperf(t, nil, args...)
		if code != 3 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--") {
			t.Errorf("wgperf %q: exit %d, stderr %q; want exit 3 and a one-line reason", args, code, stderr)
		}
	}
}

// TestFixFromStaysOffline is hole 4: "fix --from FILE" never contacts a host
// named only inside the file — not for the plan, not for --print-script — and
// --apply with --from needs --host. A logging ssh stub in PATH proves no ssh ran.
func TestFixFromStaysOffline(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "ssh.log")
	stub := "#!/bin/sh\necho \"$@\" >> " + log + "\nexit 255\n"
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	findings := filepath.Join(dir, "diagnose.json")
	const f = `{"findings": [{"id": "route.stale-endpoint", "severity": "critical", "host": "ssh:root@golem.invalid", "title": "t",
	  "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "endpoint-route", "params": {"endpoint": "46.38.233.77"}}}]}]}`
	if err := os.WriteFile(findings, []byte(f), 0o600); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + dir + ":" + os.Getenv("PATH")
	for _, args := range [][]string{
		{"fix", "--from", findings, "--root", dir},
		{"fix", "--from", findings, "--root", dir, "--print-script"},
		{"fix", "--from", findings, "--root", dir, "--json"},
		{"fix", "--from", findings, "--root", dir, "--apply"},
	} {
		code, stderr := wgperf(t, []string{path}, args...)
		if code != 3 {
			t.Errorf("wgperf %q: exit %d, want 3 (%s)", args, code, stderr)
		}
		if b, _ := os.ReadFile(log); len(b) > 0 {
			t.Fatalf("wgperf %q ran ssh %s", args, b)
		}
	}
	code, stderr := wgperf(t, []string{path}, "fix", "--from", findings, "--root", dir, "--apply")
	if code != 3 || !strings.Contains(stderr, "--apply with --from needs --host") {
		t.Errorf("--apply --from without --host: exit %d, %s", code, stderr)
	}
}

// TestTerminalOutputEscapesSnapshotText is hole 7's last part: an escape
// sequence in a snapshot (here an OSC that retitles the terminal, in a device
// name) reaches a terminal escaped; since issue 30 the reader refuses it,
// naming the field with the value escaped. script(1) gives the run a terminal.
func TestTerminalOutputEscapesSnapshotText(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("needs script(1) for a pseudo-terminal")
	}
	raw, err := os.ReadFile("../../testdata/snapshots/seed000-golem.json")
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "snap.json")
	evil := strings.ReplaceAll(string(raw), "br-lan.253", `br-lan.253\u001b]0;pwned\u0007`)
	if err := os.WriteFile(snap, []byte(evil), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("script", "-qec", shell.Join(os.Args[0], "diagnose", "--from", snap), "/dev/null")
	cmd.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1")
	out, _ := cmd.Output()
	if !strings.Contains(string(out), `br-lan.253\x1b]0;pwned`) {
		t.Fatalf("the device name is not in the output, escaped:\n%s", out)
	}
	if strings.Contains(string(out), "\x1b]") || strings.Contains(string(out), "\x07") {
		t.Errorf("a raw escape sequence reached the terminal:\n%q", out)
	}
}

// TestRollbackRefusesPlantedJournal is hole 1 at the CLI: a journal directory
// owned by nobody (as root) or writable by all holds an undo line that would
// touch DIR/PWNED; "fix rollback" refuses with exit 3 and runs nothing.
func TestRollbackRefusesPlantedJournal(t *testing.T) {
	for _, how := range []string{"owned by nobody", "world-writable"} {
		dir := t.TempDir()
		jdir := filepath.Join(dir, "var/lib/wgperf/journal")
		if err := os.MkdirAll(jdir, 0o700); err != nil {
			t.Fatal(err)
		}
		pwned := filepath.Join(dir, "PWNED")
		j := `{"id": "20260101T000000.000000000Z", "host": "local", "state": "applied", "entries": [{"findings": ["x"],
		  "description": "planted", "status": "applied", "step": {"kind": "sysctl", "summary": "", "undo": ["touch ` + pwned + `"]}}]}`
		if err := os.WriteFile(filepath.Join(jdir, "20260101T000000.000000000Z.json"), []byte(j), 0o600); err != nil {
			t.Fatal(err)
		}
		switch how {
		case "owned by nobody":
			if os.Getuid() != 0 {
				continue
			}
			if err := os.Chown(jdir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		case "world-writable":
			if err := os.Chmod(jdir, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		code, stderr := wgperf(t, nil, "fix", "rollback", "--root", dir)
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("%s: rollback ran the planted undo line", how)
		}
		if code != 3 || !strings.Contains(stderr, "untrusted journal") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 and one line naming the untrusted journal", how, code, stderr)
		}
	}
}

// TestNonRootApplyFailsInOneLine is issue 30 item 11: "fix --apply" as a user
// who may not create the journal says so in one line — what failed, why and
// what it needs — instead of dumping the shell script that failed.
func TestNonRootApplyFailsInOneLine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run wgperf as nobody")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	// A directory nobody may read but not write, holding a copy of this binary.
	dir, err := os.MkdirTemp("", "wgperf-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "wgperf")
	findings := filepath.Join(dir, "f.json")
	const f = `{"findings": [{"id": "udp.rcvbuf-errors", "severity": "warning", "host": "local", "title": "t", "evidence": [],
	  "fixes": [{"description": "d", "commands": [], "action": {"kind": "sysctl", "params": {"key": "net.core.rmem_max", "value": "26214400"}}}]}]}`
	if os.WriteFile(bin, self, 0o755) != nil || os.WriteFile(findings, []byte(f), 0o644) != nil {
		t.Fatal("cannot write the test files")
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"fix", "--from", findings, "--host", "local", "--root", dir, "--apply")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := "wgperf: local: cannot create " + filepath.Join(dir, "var/lib/wgperf/journal") + ": permission denied; fix --apply needs root\n"
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || stderr.String() != want {
		t.Errorf("exit %v, stderr %q; want exit 3 and %q", err, stderr.String(), want)
	}
}
