package mtu

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// A 1400-byte R—B link whose frag-needed R drops: a PMTUD black hole. The
// probe must find it within 8 bytes of the truth in at most 20 DF probes.
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
	if d := res.PathMTU - truth; d > 0 || d < -8 {
		t.Errorf("path MTU %d, truth %d", res.PathMTU, truth)
	}
	if res.WGMTU < truth-OverheadIPv4-8 || res.WGMTU > truth-OverheadIPv4 {
		t.Errorf("WireGuard MTU %d, want within 8 of %d", res.WGMTU, truth-OverheadIPv4)
	}
	if len(res.Probes) > 20 {
		t.Errorf("%d DF probes, want <= 20", len(res.Probes))
	}
	if !res.BlackHole || len(res.Findings) != 1 || res.Findings[0].ID != "mtu.pmtud-blackhole" {
		t.Errorf("black hole %v, findings %+v", res.BlackHole, res.Findings)
	}
	// The MSS cliff lies where the tunnel's packets outgrow the narrow hop.
	if res.MSSGood == 0 || res.MSSBad == 0 || res.MSSBad-res.MSSGood > 8 || res.MSSBad+40+OverheadIPv4 <= truth-16 {
		t.Errorf("MSS cliff %d..%d does not fit a %d-byte hop", res.MSSGood, res.MSSBad, truth)
	}
}
