package scenario

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab/guest"
)

// kernelGuest runs the kernel lane's parts in one guest: testdata/kernel-guest.sh
// says in which order.
const kernelGuest = "testdata/kernel-guest.sh"

// gateEnv names a file scripts/test.sh makes when the host lane ends: the
// kernel lane's catalog, which judges throughput in an emulated guest, waits
// for it, so that nothing plays beside it. Unset, the catalog plays at once.
const gateEnv = "WGPERF_KERNEL_GATE"

// TestKernelGuest boots one guest kernel (wgperf lab vm's guest.Run) for the
// kernel lane's parts, each judged apart: the boot proof (bootproof_test.go),
// the global fixes' rollback (globalfix_test.go), a reset of what those two
// changed in the guest, then, once the host lane has ended (gateEnv), the
// catalog on kernel WireGuard (kernel_test.go). The first two judge no
// throughput, so they play beside the host lane; one guest saves the boot
// each part had of its own (about 20 s each under TCG). A guest that hangs
// is stopped at kernelSilence, and the scenarios it had not finished play
// again, once, in a fresh guest; the parts before them are not played again.
// The kill test (TestKernelGuestDiesWithWgperf) kills its guests, so it
// boots its own.
func TestKernelGuest(t *testing.T) {
	exe := kernelLane(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	hook := bootHook(t, repo)
	here := func(script string) string { return filepath.Join(repo, "internal/scenario", script) }
	ctx, cancel := context.WithTimeout(context.Background(), kernelLaneDeadline)
	defer cancel()
	// The guest sees the host's files read-only and /tmp as a throw-away
	// overlay: the gate is a folder it may read as the host writes it.
	gate, err := os.MkdirTemp("", "wgperf-gate-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(gate)
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		if waitGate(ctx, os.Getenv(gateEnv)) {
			if err := os.WriteFile(filepath.Join(gate, "open"), nil, 0o644); err != nil {
				t.Errorf("the gate: %v", err)
			}
		}
	}()
	defer func() { cancel(); <-opened }()
	scenarios := kernelLaneScenarios()
	start := time.Now()
	var out bytes.Buffer
	res, err := guest.Run(ctx, guest.Options{Progress: func(s string) { t.Log(s) }, Silence: kernelSilence, RWDirs: []string{gate},
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		append([]string{"sh", here(kernelGuest), exe, repo, hook, gate, catalogLoop,
			here(bootReplay), here(bootReplayFedora), here(bootReplayOpenWrt), here(globalFixes)}, scenarios...),
		&out, storyLog{t})
	parts := guestParts(out.String())
	var silent *guest.SilentError
	hung := errors.As(err, &silent)
	if err != nil && !hung {
		t.Fatalf("lab vm: %v; guest output:\n%s", err, out.String())
	}
	if hung {
		t.Logf("the guest hung (%v)", err)
	} else {
		t.Logf("guest: Linux %s under %s, up in %.0f s, every part in %.0f s; the last lab run exited %d",
			res.Kernel, res.Accel, res.Boot.Seconds(), time.Since(start).Seconds(), res.ExitCode)
	}
	for _, p := range []struct {
		name  string
		judge func(*testing.T, string)
	}{{"boot-proof", judgeBootProof}, {"global-fixes", judgeGlobalFixes}, {"reset", judgeReset}} {
		t.Run(p.name, func(t *testing.T) {
			o, ok := parts[p.name]
			if !ok {
				t.Fatalf("the guest never played it; its output:\n%s", out.String())
			}
			if _, next := parts[nextPart(p.name)]; !next {
				t.Fatalf("the guest stopped in it; its output:\n%s", o)
			}
			p.judge(t, o)
		})
	}
	if g, ok := parts["gate"]; ok {
		t.Logf("gate: %s", strings.TrimSpace(g))
	}
	t.Run("catalog", func(t *testing.T) {
		results := finishedResults([]byte(parts["catalog"]))
		if todo := unfinished(scenarios, results); len(todo) > 0 {
			if !hung {
				t.Errorf("no result for %v", todo)
			} else {
				t.Logf("playing %v in a fresh guest, once the host lane has ended", todo)
				<-opened
				results = append(results, playInGuests(ctx, t, exe, todo, 1)...)
			}
		}
		judgeCatalog(t, results)
	})
}

// kernelGuestParts are the parts of kernel-guest.sh, in order.
var kernelGuestParts = []string{"boot-proof", "global-fixes", "reset", "gate", "catalog"}

// nextPart is the part that follows name ("" after the last).
func nextPart(name string) string {
	for i, p := range kernelGuestParts[:len(kernelGuestParts)-1] {
		if p == name {
			return kernelGuestParts[i+1]
		}
	}
	return ""
}

// guestParts splits the guest's output at its "wgperf-part NAME" lines: each
// part's output by its name, for the parts the guest began.
func guestParts(out string) map[string]string {
	parts := map[string]string{}
	name := ""
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if n, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "wgperf-part "); ok {
			if name != "" {
				parts[name] = b.String()
			}
			name = n
			b.Reset()
			continue
		}
		b.WriteString(l)
	}
	if name != "" {
		parts[name] = b.String()
	}
	return parts
}

// judgeReset judges the reset between the parts that change the guest and
// the catalog: its links, firewall and network sysctls are the guest's own
// again, so the catalog judges doctor on them and not on what the boot proof
// fixed (a larger net.core.rmem_max, say).
func judgeReset(t *testing.T, out string) {
	defer logIfFailed(t, out)
	got := guestValues(out)
	for _, c := range []struct{ name, why string }{
		{"links", "the links the parts made, deleted"},
		{"nft-rules", "the firewall the parts loaded, flushed"},
		{"sysctls", "the network sysctls the parts changed, restored (the lines above say which)"},
		{"files", "the files the parts wrote (an OpenWrt release file, a systemd host's /run/systemd/system) went with their mount namespaces"},
	} {
		if got[c.name] != "0" {
			t.Errorf("%s = %q left, want 0: %s", c.name, got[c.name], c.why)
		}
	}
	if m, ok := got["modules"]; !ok || strings.TrimSpace(m) != "" {
		t.Errorf("modules the parts loaded and the reset left: %q (want none, the report of them present)", m)
	}
}

// guestValues is the "value NAME VALUE" lines of a part's output, by name.
func guestValues(out string) map[string]string {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.SplitN(l, " ", 3); len(f) == 3 && f[0] == "value" {
			got[f[1]] = f[2]
		}
	}
	return got
}

// waitGate reports true once the file named path exists (at once for ""),
// false when ctx ends first.
func waitGate(ctx context.Context, path string) bool {
	for path != "" {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
	return true
}

// The guest's output splits at its part lines, and a part the guest stopped
// in is there without the part after it.
func TestGuestParts(t *testing.T) {
	out := "before\nwgperf-part boot-proof\nvalue a 1\nwgperf-part global-fixes\nvalue b 2\nx\nwgperf-part reset\nvalue links 0"
	parts := guestParts(out)
	want := map[string]string{"boot-proof": "value a 1\n", "global-fixes": "value b 2\nx\n", "reset": "value links 0"}
	if len(parts) != len(want) {
		t.Fatalf("parts %q, want %q", parts, want)
	}
	for name, o := range want {
		if parts[name] != o {
			t.Errorf("%s: %q, want %q", name, parts[name], o)
		}
	}
	if _, next := parts[nextPart("reset")]; next || nextPart("reset") != "gate" {
		t.Errorf("reset's next part is %q, and the guest stopped in reset", nextPart("reset"))
	}
	if nextPart("catalog") != "" {
		t.Errorf("a part after the catalog: %q", nextPart("catalog"))
	}
	if got := guestValues(parts["global-fixes"]); got["b"] != "2" || len(got) != 1 {
		t.Errorf("values %v, want b = 2", got)
	}
}

// logIfFailed logs a part's whole output when the part failed: a green run's
// log keeps to the verdicts.
func logIfFailed(t *testing.T, out string) {
	if t.Failed() {
		t.Logf("guest output:\n%s", out)
	}
}
