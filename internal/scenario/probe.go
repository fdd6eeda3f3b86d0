package scenario

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probes"
)

// flowCount is more connections than the conntrack-full scenario's table holds.
const flowCount = 600

// probe runs one active measurement and returns the findings it proves and a
// one-line summary for the story.
func (r *runner) probe(ctx context.Context, p Probe) ([]finding.Finding, string, error) {
	switch p {
	case ProbeMTU:
		mc := r.tunnel().MTU()
		// B pings back (the black hole is located) and sends the return's MSS steps.
		mc.BackAddr, mc.BackTunnelAddr = r.lab.Node("a").UnderlayAddr, r.lab.Node("a").TunnelAddr
		res, err := mtu.Run(ctx, mc)
		if err != nil {
			return nil, "", err
		}
		r.res.MTU = res
		return res.Findings, res.Summary(), nil
	case ProbeICMPBurst:
		// mwan3-style health checks: the next hop and the far endpoint.
		res, err := icmpburst.Run(ctx, r.tunnel().ICMPBurst([]string{"198.51.100.1", r.lab.Node("b").UnderlayAddr}, ""))
		if err != nil {
			return nil, "", err
		}
		return res.Findings, res.Summary(), nil
	case ProbeFlows:
		_, err := r.lab.Target("a").Run(ctx, r.opts.Exe, "lab", "_flows", "--to", r.lab.Node("b").TunnelAddr, "--count", strconv.Itoa(flowCount))
		if err != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("%d new UDP flows from A to B through the tunnel", flowCount), nil
	}
	return nil, "", fmt.Errorf("unknown probe %q", p)
}

// tunnel is the lab's tunnel from A to B as the probes see it.
func (r *runner) tunnel() probes.Tunnel {
	return probes.Tunnel{Client: r.lab.Target("a"), Server: r.lab.Target("b"), Endpoints: discover.Endpoints{
		TunnelAddr: r.lab.Node("b").TunnelAddr, UnderlayAddr: r.lab.Node("b").UnderlayAddr,
		ClientInterface: r.lab.WGInterface("a"), ServerInterface: r.lab.WGInterface("b")}}
}
