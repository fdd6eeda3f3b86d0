//go:build !router

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndlessRemoteLineEndsOnSIGTERM is issue 55's hole 3 end to end: an ssh
// host (an ssh stand-in first on PATH) whose wgperf sampler prints one line
// without end hung "wgperf drops" for ever, SIGTERM ignored. Now the command
// ends by itself, saying why, or at the latest on SIGTERM.
func TestEndlessRemoteLineEndsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	// The shared connection's master "starts" (and never listens); every
	// session prints one line without end.
	stub := "#!/bin/sh\ncase \"$*\" in *ControlMaster=yes*) exit 0 ;; esac\nwhile :; do printf '%s' xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done\n"
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "drops", "--host", "ssh:root@endless.invalid", "--duration", "1h")
	cmd.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1", "PATH="+dir+":"+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second): // a liveness bound: it used to never end
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("wgperf drops still ran 30 s after SIGTERM; stderr:\n%s", stderr.String())
		}
	}
	t.Logf("exit %v; stderr: %s", cmd.ProcessState, stderr.String())
	if s := stderr.String(); !strings.Contains(s, "longer than") {
		t.Errorf("stderr does not say the line was too long:\n%s", s)
	}
}
