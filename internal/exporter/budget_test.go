package exporter

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
)

// A collection over its target's budget, in series or in bytes of text,
// fails with the limit and its flag named, and holds nothing.
func TestRoundWithinLimits(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	res := check.Run([]*facts.Snapshot{snap}, check.Options{})
	pl := peerLabels{roam: newRoamLimiter()}
	whole := newRound(snap, res, time.Second, pl, Limits{})
	if whole.err != nil || whole.series == 0 || whole.size == 0 {
		t.Fatalf("the recorded multi-wan host: %v (%d series, %d bytes)", whole.err, whole.series, whole.size)
	}
	for _, tc := range []struct {
		name   string
		lim    Limits
		flag   string
		series int
	}{
		{"one series short", Limits{Series: whole.series - 1}, "--metrics.max-series", whole.series},
		{"one byte short", Limits{Bytes: whole.size - 1}, "--metrics.max-bytes", whole.series},
	} {
		r := newRound(snap, res, time.Second, pl, tc.lim)
		if !errors.Is(r.err, errOverBudget) || !strings.Contains(r.err.Error(), tc.flag) {
			t.Errorf("%s: error %v, want one naming %s", tc.name, r.err, tc.flag)
		}
		if r.families != nil || r.series != tc.series {
			t.Errorf("%s: %d families, series %d; want none, %d", tc.name, len(r.families), r.series, tc.series)
		}
	}
	exact := newRound(snap, res, time.Second, pl, Limits{Series: whole.series, Bytes: whole.size})
	if exact.err != nil || exact.size != whole.size {
		t.Errorf("exactly at both limits: %v, %d bytes; want the whole %d", exact.err, exact.size, whole.size)
	}
}

// The listener serves at most its cap of connections at once: the next
// is accepted only when one closes.
func TestLimitListenerCapsConnections(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(raw, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	defer second.Close()
	time.Sleep(200 * time.Millisecond) // room for a third Accept, which must not come
	select {
	case c := <-accepted:
		c.Close()
		t.Fatal("a third connection was accepted while two were open")
	default:
	}
	first.Close()
	(<-accepted).Close()
}
