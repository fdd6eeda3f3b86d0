package doctor

import (
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The shaper-cap scenario's shape: A's tunnel capped at 80 Mbit/s on a 200
// Mbit/s path, B's not capped; each direction is judged at its sender.
func TestShaperCaps(t *testing.T) {
	capped := &facts.Snapshot{Host: targettest.Spec("netns:wgl-cap-a"), Links: []facts.Link{{Name: "eth0"}, {Name: "wg-cap-a", Shaper: &facts.Shaper{Qdisc: "tbf", RateMbit: 80}}}}
	free := &facts.Snapshot{Host: targettest.Spec("netns:wgl-cap-b"), Links: []facts.Link{{Name: "wg-cap-b"}}}
	m := Measured{Benched: true, Client: capped.Host, Server: free.Host, Expected: bench.SingleHopRatio}
	m.Up = bench.DirRate{Tunnel: 76.4, Underlay: 190.2}
	m.Down = bench.DirRate{Tunnel: 181.5, Underlay: 190.4}
	ep := discover.Endpoints{ClientInterface: "wg-cap-a", ServerInterface: "wg-cap-b"}
	fs := shaperCaps(m, ep, []*facts.Snapshot{capped, free})
	if len(fs) != 1 || fs[0].ID != catalog.ThroughputShaperCap || !fs[0].Host.Same(capped.Host) || fs[0].Interface != "wg-cap-a" {
		t.Fatalf("findings %+v, want the cap on A's tunnel", fs)
	}
	causes := Rank(fs, m)
	if len(causes) != 1 || causes[0].Direction != "upload" || causes[0].Explains < 0.5 {
		t.Errorf("ranked %+v: want the upload's cause, explaining most of its deficit", causes)
	}
	// The same cap seen from the other side: A sends the download.
	m.Client, m.Server = free.Host, capped.Host
	m.Up, m.Down = m.Down, m.Up
	ep.ClientInterface, ep.ServerInterface = "wg-cap-b", "wg-cap-a"
	if fs := shaperCaps(m, ep, []*facts.Snapshot{capped, free}); len(fs) != 1 || !fs[0].Host.Same(capped.Host) {
		t.Errorf("A as the server: %+v", fs)
	}
}
