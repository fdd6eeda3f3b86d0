package fix

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/remedy"
)

// TestHoldRouteForRun: a route held for a measurement is in place until
// Release removes it (the host's routes back byte for byte, the stale host
// route included), and a hold never released is removed by its watchdog.
func TestHoldRouteForRun(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	before := h.state(t)
	rem, err := remedy.RouteForRun("46.38.233.77", remedy.Route{Via: "192.0.2.254", Dev: "v0"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := hold(ctx, h.env, rem, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if s := h.state(t); !strings.Contains(s, "46.38.233.77 via 192.0.2.254 dev v0 proto static") {
		t.Fatalf("held: no route through the uplink:\n%s", lineDiffText(before, s))
	}
	if _, err := hold(ctx, h.env, rem, time.Minute); err == nil {
		t.Error("a second hold while the first is held was accepted")
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if after := h.state(t); after != before {
		t.Fatalf("released: state not restored:\n%s", lineDiffText(before, after))
	}
	if j, _ := LoadJournal(ctx, h.env, held.Journal().ID); j == nil || j.State != StateRolledBack {
		t.Errorf("journal after release: %+v", j)
	}

	// wgperf cut off mid-run: the watchdog removes it at the deadline.
	held, err = hold(ctx, h.env, rem, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(12 * time.Second)
	for h.state(t) != before {
		if time.Now().After(deadline) {
			t.Fatalf("not removed 10 s after the hold's deadline:\n%s", lineDiffText(before, h.state(t)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := held.Release(ctx); err == nil || !strings.Contains(err.Error(), "watchdog") {
		t.Errorf("release after the watchdog: %v, want the watchdog named", err)
	}
}
