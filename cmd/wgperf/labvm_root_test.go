//go:build !router

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab/guest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestLabVMLeavesNoGuestWhenKilled kills "wgperf lab vm" with SIGINT,
// SIGTERM and SIGKILL while its guest boots and while the guest's command
// runs, and finds none of the guest's processes left: a stand-in for vng
// and QEMU (internal/lab/guest/testdata/fake-vng) records every process it
// starts, one of them a "QEMU" that keeps the output open as a real one
// does. The real guest's kill is proven in the kernel lane
// (TestKernelGuestDiesWithWgperf).
func TestLabVMLeavesNoGuestWhenKilled(t *testing.T) {
	testutil.RequireRoot(t)
	for _, phase := range []struct {
		name, hang string
		procs      int // processes recorded once the phase is reached
	}{{"boot", "always", 2}, {"command", "never", 3}} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
			t.Run(phase.name+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				bin := filepath.Join(dir, "bin")
				if err := os.Mkdir(bin, 0o755); err != nil {
					t.Fatal(err)
				}
				fake, _ := filepath.Abs("../../internal/lab/guest/testdata/fake-vng")
				if err := os.Symlink(fake, filepath.Join(bin, "vng")); err != nil {
					t.Fatal(err)
				}
				for _, r := range guest.Requirements[1:] {
					if err := os.WriteFile(filepath.Join(bin, r.Program), []byte("#!/bin/sh\n"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				kernel := filepath.Join(dir, "vmlinuz")
				if err := os.WriteFile(kernel, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				pids := filepath.Join(dir, "pids")
				cmd := exec.Command(os.Args[0], "lab", "vm", "--accel", "tcg", "--kernel", kernel, "--",
					"sh", "-c", `echo $$ >>"$FAKE_VNG_PIDS"; exec sleep 3600`)
				cmd.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1", "FAKE_VNG_PIDS="+pids, "FAKE_VNG_HANG="+phase.hang,
					"PATH="+bin+":"+os.Getenv("PATH"))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(20 * time.Second); len(recorded(pids)) < phase.procs; time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						_ = cmd.Process.Kill()
						_ = cmd.Wait()
						t.Fatalf("the guest's %s phase never came (recorded %v); lab vm said: %s", phase.name, recorded(pids), stderr.String())
					}
				}
				_ = cmd.Process.Signal(sig)
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case <-done:
				case <-time.After(15 * time.Second):
					_ = cmd.Process.Kill()
					<-done
					t.Errorf("lab vm did not end within 15 s of %s; it said: %s", sig, stderr.String())
				}
				deadline := time.Now().Add(5 * time.Second)
				for _, pid := range recorded(pids) {
					for alive(pid) {
						if time.Now().After(deadline) {
							t.Errorf("after %s: guest process %d still runs", sig, pid)
							_ = syscall.Kill(pid, syscall.SIGKILL)
							break
						}
						time.Sleep(20 * time.Millisecond)
					}
				}
			})
		}
	}
}

// recorded is the pids a stand-in guest wrote.
func recorded(file string) []int {
	b, _ := os.ReadFile(file)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
