package mtu

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// A 1400-byte R—B link whose frag-needed R drops: a PMTUD black hole. The
// probe must find it exactly in at most 12 probes, DF pings and MSS steps
// together, and locate the TCP cliff to the byte.
func TestMTUBlackHoleLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	const truth = 1400
	l := labtest.Up(t, lab.Config{Name: "wgb2", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}, PathMTU: truth, DropFragNeeded: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Addr: l.Node("b").UnderlayAddr,
		TunnelAddr: l.Node("b").TunnelAddr, ClientInterface: l.WGInterface("a")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("path MTU %d, WireGuard MTU %d, %d DF probes, MSS cliff %d/%d, %.1fs", res.PathMTU, res.WGMTU, len(res.Probes), res.MSSGood, res.MSSBad, res.Seconds)
	if res.PathMTU != truth || res.WGMTU != truth-OverheadIPv4 {
		t.Errorf("path MTU %d, WireGuard MTU %d; want %d, %d", res.PathMTU, res.WGMTU, truth, truth-OverheadIPv4)
	}
	if n := len(res.Probes) + len(res.MSSRuns); n > 12 {
		t.Errorf("%d DF probes + %d MSS steps = %d, want <= 12", len(res.Probes), len(res.MSSRuns), n)
	}
	if !res.BlackHole || len(res.Findings) != 1 || res.Findings[0].ID != "mtu.pmtud-blackhole" {
		t.Errorf("black hole %v, findings %+v", res.BlackHole, res.Findings)
	}
	// The MSS cliff lies where the tunnel's packets outgrow the narrow hop.
	if want := truth - OverheadIPv4 - 40 - tcpTimestamps; res.MSSGood != want || res.MSSBad != want+1 {
		t.Errorf("MSS cliff %d..%d, want %d..%d for a %d-byte hop", res.MSSGood, res.MSSBad, want, want+1, truth)
	}
}

// BenchmarkMTUSearchBlackHole times the whole search over the black-hole
// lab (make bench): seconds and probes per search.
func BenchmarkMTUSearchBlackHole(b *testing.B) {
	testutil.RequireRoot(b)
	testutil.RequireTools(b, "iperf3")
	l := labtest.Up(b, lab.Config{Name: "wgbb", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true})
	var probes, steps int
	b.ResetTimer()
	for range b.N {
		res, err := Run(context.Background(), Config{Client: l.Target("a"), Server: l.Target("b"), Addr: l.Node("b").UnderlayAddr,
			TunnelAddr: l.Node("b").TunnelAddr, ClientInterface: l.WGInterface("a")})
		if err != nil {
			b.Fatal(err)
		}
		probes, steps = probes+len(res.Probes), steps+len(res.MSSRuns)
	}
	b.ReportMetric(float64(probes)/float64(b.N), "DF-probes/op")
	b.ReportMetric(float64(steps)/float64(b.N), "MSS-steps/op")
}

// TestMTUFromBusyBoxRouter runs the search on the lab's OpenWrt-like router
// over dropbear: BusyBox ping has no -M and ip no -j, so the DF probes go
// out as BusyBox "traceroute -F" and the route is read from ip's text. The
// black-holed 1400-byte hop is still found exactly.
func TestMTUFromBusyBoxRouter(t *testing.T) {
	testutil.RequireRoot(t)
	const truth = 1400
	l := labtest.Up(t, lab.Config{Name: "wgbr", Topology: lab.SiteToSite, Router: true, PathMTU: truth, DropFragNeeded: true})
	spec := labtest.Router(t, l)
	router, err := target.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Client: router, Addr: l.Node("b").UnderlayAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: path MTU %d in %d DF probes with %s, %.1fs", spec, res.PathMTU, len(res.Probes), res.Method, res.Seconds)
	if res.Method != MethodTraceroute || res.PathMTU != truth || !res.BlackHole {
		t.Errorf("method %q, path MTU %d, black hole %v; want %q, %d, true", res.Method, res.PathMTU, res.BlackHole, MethodTraceroute, truth)
	}
	if len(res.Probes) > 12 {
		t.Errorf("%d DF probes, want <= 12", len(res.Probes))
	}
}
