package fix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
)

// killWatchdog ends j's watchdog as a reboot would, without a trace.
func killWatchdog(t *testing.T, j *Journal) {
	t.Helper()
	if j.WatchdogPID <= 0 {
		t.Fatal("no watchdog to kill")
	}
	if err := syscall.Kill(-j.WatchdogPID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the watchdog %d: %v", j.WatchdogPID, err)
	}
}

// unconfirmedActions are what the confirm tests apply: a sysctl (runtime and
// sysctl.d), the WireGuard MTU (runtime and wg-quick's file) and the stale
// endpoint route.
func unconfirmedActions() []finding.Finding {
	all := rootActions()
	return []finding.Finding{all[0], all[3], all[6]}
}

// TestLateConfirmRollsBack is issue 30 item 2: with the watchdog gone (a
// reboot, a kill), a confirm after the deadline is refused, and the change
// nobody confirmed in time is rolled back then.
func TestLateConfirmRollsBack(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	before := h.state(t)
	// Long enough that the watchdog is killed before it fires on a loaded
	// machine, then waited out.
	j, err := Apply(ctx, h.env, planFor(t, h, unconfirmedActions()), ApplyOptions{Confirm: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	killWatchdog(t, j)
	time.Sleep(time.Until(j.ConfirmBy) + time.Second)
	if h.state(t) == before {
		t.Fatal("the change is gone without its watchdog")
	}
	if _, err := Apply(ctx, h.env, planFor(t, h, rootActions()[1:2]), ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "was not confirmed by") {
		t.Errorf("apply over an expired unconfirmed fix: %v, want a refusal naming it", err)
	}
	_, err = Confirm(ctx, h.env)
	if err == nil || !strings.Contains(err.Error(), "too late") || !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("late confirm: %v, want too late, rolled back", err)
	}
	if after := h.state(t); after != before {
		t.Errorf("a late confirm left the change in place:\n%s", lineDiffText(before, after))
	}
	if got, err := LoadJournal(ctx, h.env, j.ID); err != nil || got.State != StateRolledBack {
		t.Errorf("journal after the late confirm: %v; want it rolled back", err)
	}
}

// TestBootRollsBackUnconfirmed is issue 30 item 2's reboot: the fix is
// applied with a minute to confirm, the reboot ends the watchdog and the
// applying process, and the boot hook's RollbackUnconfirmed brings the host
// back to where it was (a confirmed fix stays).
func TestBootRollsBackUnconfirmed(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	all := rootActions()
	// A confirmed fix first: the boot hook must leave it alone.
	if _, err := Apply(ctx, h.env, planFor(t, h, all[1:2]), ApplyOptions{Confirm: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := Confirm(ctx, h.env); err != nil {
		t.Fatal(err)
	}
	before := h.state(t)
	j, err := Apply(ctx, h.env, planFor(t, h, unconfirmedActions()), ApplyOptions{Confirm: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	killWatchdog(t, j)
	if h.state(t) == before {
		t.Fatal("apply changed nothing")
	}
	done, err := RollbackUnconfirmed(ctx, h.env)
	if err != nil || len(done) != 1 || done[0].ID != j.ID {
		t.Fatalf("RollbackUnconfirmed = %v, %v; want fix %s", done, err, j.ID)
	}
	if after := h.state(t); after != before {
		t.Errorf("the boot hook did not restore the state:\n%s", lineDiffText(before, after))
	}
	if done, err := RollbackUnconfirmed(ctx, h.env); err != nil || len(done) != 0 {
		t.Errorf("second boot: %v, %v; want nothing to do", done, err)
	}
}

// TestWatchdogRefusesSwappedJournal is issue 30 item 2's last part: at the
// deadline the watchdog runs the revert script only if every directory from
// / down to the journal is root's and writable by nobody else, and the script
// is the one wgperf wrote (its SHA-256, recorded when it armed the
// watchdog). A journal directory swapped above a writable parent, or a
// script changed in place, runs nothing (TestConfirmTimeoutReverts is the
// control: untouched, it reverts).
func TestWatchdogRefusesSwappedJournal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, h *labHost, j *Journal, script []byte)
	}{
		{"journal directory swapped above a writable parent", func(t *testing.T, h *labHost, j *Journal, script []byte) {
			wgperfDir := filepath.Dir(h.env.journalDir())
			must(t, os.Chmod(filepath.Dir(wgperfDir), 0o777))
			must(t, os.Rename(wgperfDir, wgperfDir+".real"))
			must(t, os.MkdirAll(h.env.journalDir(), 0o700))
			for _, suffix := range []string{".json", ".revert.sh"} {
				b, err := os.ReadFile(filepath.Join(wgperfDir+".real/journal", j.ID+suffix))
				must(t, err)
				if suffix == ".revert.sh" {
					b = script
				}
				must(t, os.WriteFile(h.env.journalPath(j.ID, suffix), b, 0o700))
			}
		}},
		{"revert script changed in place", func(t *testing.T, h *labHost, j *Journal, script []byte) {
			must(t, os.WriteFile(h.env.journalPath(j.ID, ".revert.sh"), script, 0o700))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newLabHost(t)
			ctx := context.Background()
			before := h.state(t)
			j, err := Apply(ctx, h.env, planFor(t, h, rootActions()[:1]), ApplyOptions{Confirm: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			pwned := filepath.Join(h.root, "PWNED")
			tc.plant(t, h, j, []byte("#!/bin/sh\ntouch "+pwned+"\n"))
			applied := h.state(t)
			time.Sleep(4 * time.Second)
			if _, err := os.Stat(pwned); err == nil {
				t.Fatal("the watchdog ran the planted script as root")
			}
			if h.state(t) != applied {
				t.Error("the watchdog changed the host though it refused")
			}
			if h.state(t) == before {
				t.Error("the change was reverted: the planted script was not what ran")
			}
		})
	}
}
