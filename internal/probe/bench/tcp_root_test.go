package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// A receiver whose tcp_rmem maximum is 256 KiB on a 100 Mbit/s, 20 ms path
// (BDP about 250 KB): its window holds one stream, in the tunnel and
// outside it, while four streams fill the path. ss at the sender says the
// flow waited for the window, and the bench names the window and tcp_rmem
// on the receiver, with the sysctl's fix.
func TestBenchNamesReceiveWindow(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ss")
	l := labtest.Up(t, lab.Config{Name: "tcps1", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 100, DelayMs: 10}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := l.Node("b")
	if _, err := l.Target("b").Run(ctx, "sysctl", "-w", "net.ipv4.tcp_rmem=4096 131072 262144"); err != nil {
		t.Fatal(err)
	}
	rep, err := Measure(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), TunnelAddr: b.TunnelAddr, UnderlayAddr: b.UnderlayAddr,
		Seconds: 4, Omit: 1, Parallel: 4, Samples: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range rep.Runs {
		t.Logf("%s: %.1f Mbit/s, notes %q", run.Spec, run.Stats.Mbit, run.Notes)
	}
	up := find(rep, PathTunnel, Upload, 1)
	if up == nil || up.TCP == nil {
		t.Fatalf("no TCP state of the tunnel upload: %+v", up)
	}
	ends := map[string]bool{}
	for _, f := range up.TCP.Flows {
		ends[f.End+" "+f.Role] = f.Samples > 0 && f.MSS > 0
	}
	if !ends["client sender"] || !ends["server receiver"] {
		t.Errorf("flows read %v, want the client sending and the server receiving", ends)
	}
	var named bool
	for _, f := range rep.Findings {
		t.Logf("%s@%s: %s", f.ID, f.Host, f.Title)
		if f.ID != catalog.TCPBuffersSmall {
			continue
		}
		if f.Host.String() != l.Target("b").String() || !strings.Contains(f.Title, "receive window") || !strings.Contains(f.Title, "tcp_rmem max 256K") {
			t.Errorf("finding %s@%s %q: want the receiver's window and tcp_rmem", f.ID, f.Host, f.Title)
			continue
		}
		if len(f.Fixes) == 0 || f.Fixes[0].Action == nil || f.Fixes[0].Action.Params["key"] != "net.ipv4.tcp_rmem" {
			t.Errorf("fixes %+v: want tcp_rmem raised", f.Fixes)
		}
		named = true
	}
	if !named {
		t.Errorf("no %s finding on the receiver", catalog.TCPBuffersSmall)
	}
}
