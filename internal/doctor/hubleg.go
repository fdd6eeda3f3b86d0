package doctor

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/shell"
)

// This file judges a path through hubs against its legs (--via): the tunnel
// is as fast as its slowest leg, which the ratio (against that leg) calls
// healthy, while the user sees a tunnel far slower than their own link.
// When a later leg (a hub's towards the server) carries well under the
// client's own leg, that leg is the cause, named with the figures beside
// each other.

// slowLeg is how far under the client's own leg a later leg must carry to
// be the path's limit: the tuning guide's 90%, less the noise of two runs.
const slowLeg = 0.8

// hubLegFindings names the leg that limits a path through hubs, each
// direction on its own; pure.
func hubLegFindings(b *bench.Report, m Measured) []finding.Finding {
	if b == nil || len(b.HopUnderlay) < 2 {
		return nil
	}
	var out []finding.Finding
	for _, d := range []struct {
		dir    string
		tunnel float64
		rate   func(bench.HopRate) float64
	}{
		{bench.Upload, m.Up.Tunnel, func(h bench.HopRate) float64 { return h.UploadMbit }},
		{bench.Download, m.Down.Tunnel, func(h bench.HopRate) float64 { return h.DownloadMbit }},
	} {
		hops := b.HopUnderlay
		first := d.rate(hops[0])
		slow := -1
		for i, h := range hops[1:] {
			if r := d.rate(h); r > 0 && r < slowLeg*first && (slow < 0 || r < d.rate(hops[slow])) {
				slow = i + 1
			}
		}
		if first <= 0 || slow < 0 {
			continue
		}
		leg := hops[slow]
		var ev []finding.Evidence
		for _, h := range hops {
			e := finding.Evidence{Source: "bench, " + d.dir + " underlay of each hop", Key: h.String(), Value: fmt.Sprintf("%.1f Mbit/s", d.rate(h))}.Of(d.rate(h), finding.Mbits)
			if h.Hop == leg.Hop {
				e.Threshold = fmt.Sprintf(">= %.0f%% of hop 1's %.1f", slowLeg*100, first)
			}
			ev = append(ev, e)
		}
		ev = append(ev, finding.Evidence{Source: "bench, " + d.dir, Key: "tunnel through the hubs", Value: fmt.Sprintf("%.1f Mbit/s", d.tunnel)}.Of(d.tunnel, finding.Mbits))
		out = append(out, finding.Finding{
			ID: catalog.PathHubLeg, Severity: finding.Warning, Host: leg.From,
			Title: fmt.Sprintf("The path through the hub is as slow as its slowest leg (%s): %s %.1f Mbit/s where the client's own leg carries %.1f",
				d.dir, leg, d.rate(leg), first),
			Detail: fmt.Sprintf("Every packet crosses each leg in turn, so the tunnel carries at most what its slowest leg does: %s carries %.0f%% of "+
				"hop 1's rate, and the tunnel's %.1f Mbit/s is what that leg allows, not a fault of the tunnel itself. The leg's own link "+
				"(the hub's uplink towards the far end, or the far end's) is the limit.", leg, 100*d.rate(leg)/first, d.tunnel),
			Evidence: ev,
			Fixes: []finding.Fix{{
				Description: fmt.Sprintf("Raise the slow leg's link (between %s and %s), or peer the two ends directly where each can reach the other's endpoint, "+
					"so their tunnel leaves the hub out (a peer with the far end's key and its tunnel address as AllowedIPs /32 on each end)",
					shell.Terminal(leg.From.String()), shell.Terminal(leg.To.String())),
				// The leg's own rate over a longer run, to show its link's owner.
				Commands: []string{"iperf3 -s   # on " + shell.Terminal(leg.To.String()), shell.Join("iperf3", "-c", leg.Addr, "-t", "30") + "   # on " + shell.Terminal(leg.From.String())},
			}},
		})
	}
	return out
}
