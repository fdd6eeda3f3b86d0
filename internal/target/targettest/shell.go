package targettest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InShell is a Host whose commands run in a real sh of this machine, with a
// PATH that holds only sh and tools: each a program name and the script
// that stands in for it ("#!/bin/sh\n..."). A collection's batches then run
// as on a host that has these programs and no others, one process each, as
// a real host runs them, and the same limits apply: a command line longer
// than the kernel takes fails here as it fails there. What the shell reads
// by itself (a glob such as /var/run/wireguard/*.sock) is this machine's, so
// tests hold only what the tools print.
func InShell(t testing.TB, spec string, tools map[string]string) *Host {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(sh, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	for name, script := range tools {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := New(spec)
	h.Fallback = func(line string) (Answer, bool) {
		cmd := exec.Command(sh, "-c", line)
		cmd.Env = []string{"PATH=" + bin, "LC_ALL=C"}
		var stderr []byte
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = ee.Stderr
			return Answer{Out: string(out), Stderr: string(stderr), Code: ee.ExitCode()}, true
		}
		if err != nil {
			return Answer{Stderr: err.Error(), Code: 126}, true
		}
		return Answer{Out: string(out)}, true
	}
	return h
}
