package guest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// standIn puts testdata/fake-vng on PATH as vng, beside stand-ins for the
// other requirements, and points the KVM device, the memo and the guests'
// folder at a temporary directory. It returns the file the stand-in's
// processes write their pids to.
func standIn(t *testing.T, hang string) (pids string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake, err := filepath.Abs("testdata/fake-vng")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fake, filepath.Join(bin, "vng")); err != nil {
		t.Fatal(err)
	}
	for _, r := range Requirements[1:] {
		if err := os.WriteFile(filepath.Join(bin, r.Program), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	pids = filepath.Join(dir, "pids")
	t.Setenv("FAKE_VNG_PIDS", pids)
	t.Setenv("FAKE_VNG_HANG", hang)
	for _, v := range []*string{&kvmDevice, &kvmMemo, &guestsDir} {
		old := *v
		t.Cleanup(func() { *v = old })
	}
	kvmDevice = filepath.Join(dir, "kvm")
	touch(t, kvmDevice)
	kvmMemo = filepath.Join(dir, "run", "guest-kvm-fails")
	guestsDir = filepath.Join(dir, "run", "guests")
	return pids
}

// NoneLeft fails unless every pid listed in file has ended within a few
// seconds (a zombie awaiting its reaper counts as ended).
func noneLeft(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the stand-in recorded no process: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		for running(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d of the guest is still running", pid)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// running reports whether pid runs and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// TestKVMThatHangsFallsBackToTCG: a KVM guest that never says a word (a
// stand-in QEMU holding the output open) is killed at the boot bound, the
// host is remembered as one where KVM fails, and the command runs under TCG;
// nothing of either guest is left.
func TestKVMThatHangsFallsBackToTCG(t *testing.T) {
	pids := standIn(t, "kvm")
	var lines, chosen []string
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Kernel: kvmDevice, BootTimeout: time.Second, Progress: func(s string) { lines = append(lines, s) },
		Accelerator: func(s string) { chosen = append(chosen, s) }},
		[]string{"echo", "hello from the guest"}, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("Run: %v (progress %q)", err, lines)
	}
	if res.Accel != AccelTCG || !strings.Contains(res.Fallback, "no sign of life within 1s") {
		t.Errorf("accel %s, fallback %q: want TCG after KVM showed no sign of life", res.Accel, res.Fallback)
	}
	if got := out.String(); got != "hello from the guest\n" {
		t.Errorf("the command printed %q", got)
	}
	if memo, err := os.ReadFile(kvmMemo); err != nil || !strings.Contains(string(memo), "no sign of life") {
		t.Errorf("memo %q, %v: want KVM remembered as failing here", memo, err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "KVM could not boot the guest") {
		t.Errorf("progress %q does not say why TCG", lines)
	}
	if len(chosen) != 1 || !strings.Contains(chosen[0], "no sign of life") {
		t.Errorf("the accelerator's choice was told as %q, want one line with the reason", chosen)
	}
	noneLeft(t, pids)
	if left, _ := filepath.Glob(filepath.Join(guestsDir, "*")); len(left) > 0 {
		t.Errorf("guest records left behind: %v", left)
	}

	// The next run goes straight to TCG and says why.
	lines = nil
	res, err = Run(context.Background(), Options{Kernel: kvmDevice, Progress: func(s string) { lines = append(lines, s) }},
		[]string{"true"}, &out, &bytes.Buffer{})
	if err != nil || res.Accel != AccelTCG || !strings.Contains(res.Fallback, "an earlier boot on this host") {
		t.Errorf("second run: %+v, %v: want TCG from the memo", res, err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "using TCG") {
		t.Errorf("second run's progress %q does not say why TCG", lines)
	}
	noneLeft(t, pids)
}

// TestGuestThatNeverBootsFailsReadably: when TCG hangs too, the run fails
// at its bound with QEMU's last words, not at a test's timeout.
func TestGuestThatNeverBootsFailsReadably(t *testing.T) {
	pids := standIn(t, "always")
	_, err := Run(context.Background(), Options{Kernel: kvmDevice, Accel: AccelTCG, BootTimeout: time.Second}, []string{"true"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "did not boot") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v: want one line saying the guest did not boot", err)
	}
	noneLeft(t, pids)
}

// TestCommandPastItsDeadline: a command still running when the context ends
// is stopped with the whole guest, and the error carries its last output.
func TestCommandPastItsDeadline(t *testing.T) {
	pids := standIn(t, "never")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Options{Kernel: kvmDevice, Accel: AccelTCG}, []string{"sh", "-c", "echo $$ >>\"$FAKE_VNG_PIDS\"; echo 'scenario 3 of 17' >&2; exec sleep 3600"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "scenario 3 of 17") {
		t.Errorf("err = %v: want the stop with the guest's last output", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("returned %s after a 2 s deadline", waited)
	}
	noneLeft(t, pids)
}

// TestGuestThatGoesSilentIsStopped: a command that prints its progress,
// then nothing (a hung guest), is stopped once it has been silent for
// Options.Silence, with its last output, long before the context's deadline;
// one that keeps talking runs to its end.
func TestGuestThatGoesSilentIsStopped(t *testing.T) {
	pids := standIn(t, "never")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Options{Kernel: kvmDevice, Accel: AccelTCG, Silence: 4 * time.Second},
		[]string{"sh", "-c", "echo $$ >>\"$FAKE_VNG_PIDS\"; for i in 1 2 3; do echo \"step $i\" >&2; sleep 1; done; exec sleep 3600"}, &bytes.Buffer{}, &bytes.Buffer{})
	var silent *SilentError
	if !errors.As(err, &silent) || !strings.Contains(silent.Tail, "step 3") || silent.For != 4*time.Second {
		t.Errorf("err = %v: want a SilentError after 4 s with the last output (step 3)", err)
	}
	if waited := time.Since(start); waited < 6*time.Second || waited > 30*time.Second {
		t.Errorf("returned after %s: want after the three steps and 4 s of silence", waited)
	}
	noneLeft(t, pids)

	var out bytes.Buffer
	// Its output's end may lag its exit by the tree's wait delay (2 s): the
	// bound is above it.
	if _, err := Run(ctx, Options{Kernel: kvmDevice, Accel: AccelTCG, Silence: 4 * time.Second},
		[]string{"sh", "-c", "for i in 1 2 3 4 5 6; do echo \"step $i\" >&2; sleep 1; done; echo done"}, &out, &bytes.Buffer{}); err != nil || out.String() != "done\n" {
		t.Errorf("a command that keeps talking: %v, printed %q", err, out.String())
	}
}

// TestLookPathSkipsRelativeEntries: root's PATH with an empty or relative
// entry never runs a vng from the current directory.
func TestLookPathSkipsRelativeEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wgperf-planted"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, path := range []string{"", ".", "bin:", ":/usr/bin", "./"} {
		t.Setenv("PATH", path)
		if p, err := lookPath("wgperf-planted"); err == nil {
			t.Errorf("PATH=%q: found %s in the current directory", path, p)
		}
	}
}
