package fix

import (
	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// bloatedOn are the bench's latency findings for h's tunnel wg, at a rate
// whose shaper is n Mbit/s: an upload that adds 200 ms through the tunnel,
// with the queue at the tunnel's end, and on the path of each of h's
// default routes' devices (the uplink the shaper then goes on).
func bloatedOn(h *facts.Snapshot, wg string, n int) []finding.Finding {
	rtt := func(median float64) *bench.RTT {
		return &bench.RTT{Sent: 10, Received: 10, MinMs: median, MedianMs: median, P90Ms: median, MaxMs: median}
	}
	report := func(uplink string, underlayLoaded float64) *bench.Report {
		return &bench.Report{Client: h.Host, Server: targettest.Spec("the other end"), ClientInterface: wg, ClientUplink: uplink, UnderlayAddr: "192.0.2.9",
			IdleLatency: &bench.Latency{Tunnel: rtt(1), Underlay: rtt(1)},
			Runs: []bench.Run{{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: 1},
				Result:  &iperf.Result{Protocol: "tcp", Streams: 1, ReceivedMbit: (float64(n) + 0.5) / bench.SQMShare},
				Latency: &bench.Latency{Tunnel: rtt(200), Underlay: rtt(underlayLoaded)}}}}
	}
	reps := []*bench.Report{report("", 1)}
	for _, r := range h.Routes {
		if r.Dst == "default" && r.Dev != "" {
			reps = append(reps, report(r.Dev, 200))
		}
	}
	var out []finding.Finding
	for _, rep := range reps {
		bench.Analyze(rep)
		for _, f := range rep.Findings {
			if f.ID == catalog.LatencyBufferbloat {
				out = append(out, f)
			}
		}
	}
	return out
}
