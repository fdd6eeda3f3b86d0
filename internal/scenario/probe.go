package scenario

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
)

// flowCount is more connections than the conntrack-full scenario's table holds.
const flowCount = 600

// probe runs one active measurement and returns the findings it proves and a
// one-line summary for the story.
func (r *runner) probe(ctx context.Context, p Probe) ([]finding.Finding, string, error) {
	switch p {
	case ProbeMTU:
		res, err := mtu.Run(ctx, mtu.Config{
			Client: r.lab.Target("a"), Addr: r.lab.Node("b").UnderlayAddr,
			Server: r.lab.Target("b"), TunnelAddr: r.lab.Node("b").TunnelAddr,
			ClientInterface: r.lab.WGInterface("a"), ServerInterface: r.lab.WGInterface("b"),
			// B pings back (the black hole is located) and sends the return's MSS steps.
			BackAddr: r.lab.Node("a").UnderlayAddr, BackTunnelAddr: r.lab.Node("a").TunnelAddr,
		})
		if err != nil {
			return nil, "", err
		}
		r.res.MTU = res
		summary := fmt.Sprintf("path MTU %d (%d probes, %.0f s), black hole %v; recommended WireGuard MTU %d, MSS clamp %d",
			res.PathMTU, len(res.Probes), res.Seconds, res.BlackHole, res.WGMTU, res.MSSClamp)
		if res.MSSGood > 0 {
			summary += fmt.Sprintf("; MSS %d healthy, %d collapses", res.MSSGood, res.MSSBad)
		}
		return res.Findings, summary, nil
	case ProbeICMPBurst:
		// mwan3-style health checks: the next hop and the far endpoint.
		res, err := icmpburst.Run(ctx, icmpburst.Config{Host: r.lab.Target("a"),
			Targets: []string{"198.51.100.1", r.lab.Node("b").UnderlayAddr}})
		if err != nil {
			return nil, "", err
		}
		summary := fmt.Sprintf("one-shot pings failed %d/%d, persistent ping %d/%d",
			res.OneShot.Failed, res.OneShot.Sent, res.Persistent.Failed, res.Persistent.Sent)
		for _, g := range res.Grew {
			summary += fmt.Sprintf("; %s grew by %d packets", g, g.Packets)
		}
		return res.Findings, summary, nil
	case ProbeFlows:
		_, err := r.lab.Target("a").Run(ctx, r.opts.Exe, "lab", "_flows", "--to", r.lab.Node("b").TunnelAddr, "--count", strconv.Itoa(flowCount))
		if err != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("%d new UDP flows from A to B through the tunnel", flowCount), nil
	}
	return nil, "", fmt.Errorf("unknown probe %q", p)
}
