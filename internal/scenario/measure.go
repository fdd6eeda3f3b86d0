package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

// ecmpStreams spread over the tunnels: one flow would take one tunnel.
const ecmpStreams = 4

// measureUnderlay is an upload from A to B's endpoint, around the tunnel.
func (r *runner) measureUnderlay(ctx context.Context) (float64, error) {
	streams := 1
	if r.sc.ECMP > 1 {
		streams = ecmpStreams
	}
	return r.iperf(ctx, r.lab.Target("a"), r.lab.Target("b"), r.lab.Node("b").UnderlayAddr, streams)
}

// measureTunnel runs "wgperf bench --quick" between the scenario's client and
// server (both directions, tunnel and, from A to B, underlay) and returns its
// report and the single-stream upload through the tunnel. ECMP measures
// parallel flows to site B's network instead, which every tunnel routes.
func (r *runner) measureTunnel(ctx context.Context) (*bench.Report, float64, error) {
	if r.sc.ECMP > 1 {
		mbit, err := r.iperf(ctx, r.lab.Target("a"), r.lab.Target("b"), lab.SiteBLAN, ecmpStreams)
		return nil, mbit, err
	}
	client, server := orDefault(r.sc.Client, "a"), orDefault(r.sc.Server, "b")
	cfg := bench.Config{
		Client: r.lab.Target(client), Server: r.lab.Target(server),
		TunnelAddr:      r.lab.Node("b").TunnelAddr,
		UnderlayAddr:    r.lab.Node("b").UnderlayAddr,
		ClientInterface: r.lab.WGInterface(client), ServerInterface: r.lab.WGInterface(server),
		Quick: true, Seconds: r.opts.Seconds,
	}
	if r.sc.Server != "" {
		// LAN hosts have no underlay of their own: A measures that separately.
		cfg.TunnelAddr, cfg.UnderlayAddr = r.lab.Node(r.sc.Server).LANAddr, ""
	}
	rep, err := bench.Measure(ctx, cfg)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range rep.Cells {
		if c.Direction == bench.Upload && c.Streams == 1 {
			return rep, c.TunnelMbit, nil
		}
	}
	return rep, 0, fmt.Errorf("bench reported no single-stream upload")
}

// iperf runs one TCP upload and returns the receiver's rate in Mbit/s. A
// black hole can keep iperf3 from finishing: the run is bounded, and one that
// moved nothing counts as 0 instead of failing the scenario.
func (r *runner) iperf(ctx context.Context, client, server target.Target, addr string, streams int) (float64, error) {
	res, err := iperf.Run(ctx, client, server, iperf.Test{Addr: addr, Seconds: r.opts.Seconds, Omit: 1,
		Parallel: streams, Timeout: time.Duration(r.opts.Seconds+15) * time.Second})
	if err != nil {
		return 0, fmt.Errorf("iperf3 %s → %s: %w", client, addr, err)
	}
	return res.ReceivedMbit, nil
}
