package mtu_test

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/target"
)

// TestMTUOverSSH runs the DF ping search on node A reached over ssh: it finds
// the 1400-byte R—B hop that A's own 1500-byte link does not show.
func TestMTUOverSSH(t *testing.T) {
	const truth = 1400
	l := labtest.Up(t, lab.Config{Name: "wgs4", Topology: lab.SiteToSite, PathMTU: truth})
	remote, err := target.Parse(labtest.SSHD(t, l, "a"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := mtu.Run(ctx, mtu.Config{Client: remote, Addr: l.Node("b").UnderlayAddr, ClientInterface: l.WGInterface("a")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("over %s: path MTU %d (search %d..%d), WireGuard MTU %d, %d DF probes, %.1fs", remote, res.PathMTU, res.SearchMin, res.SearchMax,
		res.WGMTU, len(res.Probes), res.Seconds)
	if !res.Client.Same(target.Of(remote)) || res.SearchMax != 1500 {
		t.Errorf("client %s, search max %d: the search did not start from A's route over ssh", res.Client, res.SearchMax)
	}
	if d := res.PathMTU - truth; d > 0 || d < -8 {
		t.Errorf("path MTU %d, truth %d", res.PathMTU, truth)
	}
	// R's frag-needed reached the ping that ran over ssh on A.
	if res.BlackHole || res.FragNeededMTU != truth {
		t.Errorf("black hole %v, frag-needed MTU %d, want %d", res.BlackHole, res.FragNeededMTU, truth)
	}
	if res.WGMTU > truth-mtu.OverheadIPv4 || res.WGMTU < truth-mtu.OverheadIPv4-8 {
		t.Errorf("WireGuard MTU %d, want %d", res.WGMTU, truth-mtu.OverheadIPv4)
	}
}
