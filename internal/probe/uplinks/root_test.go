package uplinks

import (
	"context"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestTraceEachUplink traces the multi-WAN lab's two uplinks from A to B's
// endpoint with the tool Trace picks and with TTL-limited pings: the backup
// crosses the carrier's NAT (R answers it from 100.64.0.1), the fiber does
// not. About 2 s.
func TestTraceEachUplink(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "uptrace", Topology: lab.MultiWAN})
	a, ep := l.Target("a"), l.Node("b").UnderlayAddr
	want := map[string]string{"eth0": "198.51.100.1 → " + ep, "eth1": "100.64.0.1 (CGNAT) → " + ep}
	ctx := context.Background()
	for dev, w := range want {
		hops, tool, err := Trace(ctx, a, dev, ep)
		if err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
		if got := HopsText(hops); got != w {
			t.Errorf("%s by %s: %q, want %q", dev, tool, got, w)
		}
		testutil.RequireTools(t, "ping")
		hops, err = tracePing(ctx, a, dev, ep)
		if err != nil {
			t.Fatalf("%s by ping -t: %v", dev, err)
		}
		if got := HopsText(hops); got != w {
			t.Errorf("%s by ping -t: %q, want %q", dev, got, w)
		}
	}
}
