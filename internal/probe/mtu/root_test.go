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
		TunnelAddr: l.Node("b").TunnelAddr, ClientInterface: l.WGInterface("a"), ServerInterface: l.WGInterface("b")})
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
	// The narrow hop drops both ways: each end sends into it, so each gets
	// the finding and its fix on its own WireGuard interface.
	if !res.BlackHole || len(res.Findings) != 2 {
		t.Fatalf("black hole %v, %d findings %+v; want one on each end", res.BlackHole, len(res.Findings), res.Findings)
	}
	for i, n := range []string{"a", "b"} {
		if f := res.Findings[i]; f.ID != "mtu.pmtud-blackhole" || f.Host.String() != l.Target(n).String() || f.Interface != l.WGInterface(n) {
			t.Errorf("finding %d: %s on %s (%s), want mtu.pmtud-blackhole on %s (%s)", i, f.ID, f.Host, f.Interface, l.Target(n), l.WGInterface(n))
		}
	}
	// The MSS cliff lies where the tunnel's packets outgrow the narrow hop.
	if want := PredictMSSCliff(truth, 1420, OverheadIPv4, tcpIPv4); res.MSSGood != want || res.MSSBad != want+1 {
		t.Errorf("MSS cliff %d..%d, want %d..%d for a %d-byte hop", res.MSSGood, res.MSSBad, want, want+1, truth)
	}
}

// A path unlike the lab's default: a 1381-byte hop (no likely size) whose
// frag-needed R drops. WireGuard pads the inner packets to 16 bytes, so the
// cliff is MSS 1272, not the 1269 an MTU - 112 rule predicts; the search
// finds it exactly within the budget and well under 15 s.
func TestMTUOddPathLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	const truth = 1381
	l := labtest.Up(t, lab.Config{Name: "wgbo", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}, PathMTU: truth, DropFragNeeded: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Addr: l.Node("b").UnderlayAddr,
		TunnelAddr: l.Node("b").TunnelAddr, ClientInterface: l.WGInterface("a")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("path MTU %d (first failed %d), %d DF probes, MSS cliff %d/%d in %d runs, %.1fs", res.PathMTU, res.FirstFailed, len(res.Probes), res.MSSGood, res.MSSBad, len(res.MSSRuns), res.Seconds)
	if res.PathMTU > truth || res.FirstFailed <= truth || !res.BlackHole {
		t.Errorf("path MTU %d, first failed %d, black hole %v; want %d inside", res.PathMTU, res.FirstFailed, res.BlackHole, truth)
	}
	if n := len(res.Probes) + len(res.MSSRuns); n > ProbeBudget || res.Seconds >= 15 {
		t.Errorf("%d DF probes + %d MSS steps in %.1f s, want <= %d in < 15 s", len(res.Probes), len(res.MSSRuns), res.Seconds, ProbeBudget)
	}
	if res.MSSGood != 1272 || res.MSSBad != 1273 {
		t.Errorf("MSS cliff %d..%d, want 1272..1273", res.MSSGood, res.MSSBad)
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
