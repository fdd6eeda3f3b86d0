package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target"
)

// This file is doctor's side of --via: a tunnel through hubs (a road-warrior
// hub, a multi-hop path). Each hop's own underlay is measured (client → hub,
// hub → server) and the tunnel judged against the slowest; the hubs' CPUs
// are sampled during the tunnel runs (bench/hops.go).

// viaHops counts the WireGuard hops --via implies: one per leg, at least.
func (c *Config) viaHops() {
	if len(c.Via) > 0 {
		c.Hops = max(c.Hops, len(c.Via)+1)
	}
}

// viaThreshold says how the ratio is judged through hubs.
func (r *Report) viaThreshold(c *Config) {
	if len(c.Via) == 0 {
		return
	}
	var hubs []string
	for _, h := range c.Via {
		hubs = append(hubs, h.String())
	}
	r.Threshold = fmt.Sprintf("%d WireGuard hops through %s: the tunnel should carry ≥ %.0f%% of the slowest hop's underlay, each hop measured on its own",
		c.Hops, strings.Join(hubs, ", "), bench.MultiHopRatio*100)
}

// discoverPath finds the tunnel to measure: between the two ends, or, with
// --via, hop by hop through the hubs, whose legs the bench then measures.
func (r *Report) discoverPath(ctx context.Context, c *Config) (discover.Endpoints, error) {
	if len(c.Via) == 0 {
		ep, err := discover.Tunnel(ctx, c.Client, c.Server)
		if err == nil {
			r.hubFound(c, ep)
		}
		return ep, err
	}
	bc := bench.Config{Client: c.Client, Server: c.Server}
	if err := bc.DiscoverVia(ctx, c.Via); err != nil {
		return discover.Endpoints{}, err
	}
	r.via.legs = bc.Legs
	for _, h := range c.Via {
		r.via.hubs = append(r.via.hubs, readCPU(ctx, h))
	}
	return discover.Endpoints{TunnelAddr: bc.TunnelAddr, ClientInterface: bc.ClientInterface, ServerInterface: bc.ServerInterface,
		ClientPort: bc.ClientPort, ServerPort: bc.ServerPort}, nil
}

// hopLines are the hops' own underlays and the hubs' load, for the text.
func (r *Report) hopLines() []string {
	if r.Bench == nil || len(r.Bench.Via) == 0 {
		return nil
	}
	return r.Bench.HopLines()
}

// viaPath is what doctor keeps of a path through hubs: its hops, and each
// hub's CPU limits and times read just before the bench.
type viaPath struct {
	legs []bench.Leg
	hubs []cpuNow
}

// hubCPULimitsAfterBench judges each hub as cpuLimitsAfterBench judges the
// ends: the periods a process (the hub's WireGuard) ran out of its cgroup's
// quota during the bench, and the time the hypervisor stole from the hub. A
// hub carries the tunnel twice (decrypts, forwards, encrypts): on a VPS
// with a quota, it is the path's ceiling.
func (r *Report) hubCPULimitsAfterBench(ctx context.Context) []finding.Finding {
	var out []finding.Finding
	for _, before := range r.via.hubs {
		out = append(out, cpuLimitFindings(target.Of(before.t), before, readCPU(ctx, before.t))...)
	}
	return out
}
