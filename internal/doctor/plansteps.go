package doctor

import (
	"context"
	"slices"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/roaming"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
)

// Plan is doctor's plan after it collected both ends and ran the passive
// checks: the bench and the analyses judged against what it found, then the
// targeted probes the evidence calls for (PlanProbes), then the long run and
// the shaping sweep that follows collapse cycles. Run plays it; the lab's
// scenarios play the same plan through Run and its probes again through
// Replay. Every targeted probe of probes.All has its step here
// (TestEveryProbeIsInThePlan).
func Plan() []Round {
	return []Round{
		{Name: "measure", Always: true, start: noFarEnd, Steps: []Step{
			{Name: "bench", Needs: Needs{FarEnd: true}, Raises: bench.Raises,
				Doc: "finds the tunnel and benches it against its underlay both ways: the ratio, stalls, collapses, drops, CPU and latency under load",
				analyse: func(ctx context.Context, p *play) {
					p.found = append(p.found, p.r.bench(ctx, p.c)...)
				}},
			{Name: "unreachable", Needs: Needs{FarEnd: true, Unreachable: true},
				Doc: "pings through a tunnel the bench could not cross and reads both ends' views of each other: why nothing crosses",
				analyse: func(ctx context.Context, p *play) {
					p.r.explainUnreachable(ctx, p.c, p.snaps)
				}},
			{Name: "peer-watch", Needs: Needs{FarEnd: true}, Raises: roaming.Raises,
				Doc: "both ends' peers sampled through the bench: endpoints that take turns (two devices sharing a key)",
				analyse: func(_ context.Context, p *play) {
					p.found = append(p.found, p.r.watches.stop()...)
				}},
			{Name: "cpu-limits", Needs: Needs{FarEnd: true, Bench: true}, Raises: []catalog.ID{catalog.CPUQuotaThrottled, catalog.CPUSteal},
				Doc: "each end's CPU quota periods and stolen time that grew during the bench: a CPU limit the bench met",
				analyse: func(ctx context.Context, p *play) {
					p.found = append(p.found, p.r.cpuLimitsAfterBench(ctx, p.c, p.snaps)...)
				}},
			{Name: "hub-cpu-limits", Needs: Needs{FarEnd: true, Bench: true}, Raises: []catalog.ID{catalog.CPUQuotaThrottled, catalog.CPUSteal},
				Doc: "the same for each hub of --via: a hub's CPU limit is the path's ceiling",
				analyse: func(ctx context.Context, p *play) {
					p.found = append(p.found, p.r.hubCPULimitsAfterBench(ctx)...)
				}},
			{Name: "hub-legs", Needs: Needs{FarEnd: true, Bench: true}, Raises: []catalog.ID{catalog.PathHubLeg},
				Doc: "a path through hubs against its legs: the leg that limits it",
				analyse: func(_ context.Context, p *play) {
					p.found = append(p.found, hubLegFindings(p.r.Bench, p.r.Measured)...)
				}},
			{Name: "shaper-caps", Needs: Needs{FarEnd: true, Bench: true}, Raises: []catalog.ID{catalog.ThroughputShaperCap},
				Doc: "each direction's sending tunnel interface against the bench: a shaper's cap that holds the tunnel below the path",
				analyse: func(_ context.Context, p *play) {
					p.found = append(p.found, shaperCaps(p.r.Measured, p.r.endpoints, p.snaps)...)
				}},
			{Name: "uplinks", Needs: Needs{FarEnd: true}, Raises: uplinks.Raises,
				Doc: "each uplink of a client that has several, measured to the endpoint: the tunnel on the slow one",
				analyse: func(ctx context.Context, p *play) {
					p.found = p.r.measureUplinks(ctx, p.c, p.snaps, p.found)
				}},
			{Name: "same-limit-other-end", Needs: Needs{FarEnd: true, Found: []catalog.ID{catalog.UDPRcvbufErrors}}, Raises: []catalog.ID{catalog.UDPRcvbufErrors},
				Doc: "the receive-buffer limit the bench proved on one end, found as small on the other",
				analyse: func(_ context.Context, p *play) {
					p.found = sameLimitOtherEnd(p.found, p.snaps)
				}},
			{Name: "bond-spread", Needs: Needs{FarEnd: true},
				Doc: "parallel streams through and around a tunnel that leaves by a flow-hashing bond: whether the bond spreads flows past it",
				analyse: func(ctx context.Context, p *play) {
					p.r.measureBondSpread(ctx, p.c, p.snaps)
				}},
			{Name: "ecmp", Needs: Needs{FarEnd: true}, Raises: []catalog.ID{catalog.RouteECMPSuggested},
				Doc: "a tunnel bound to one CPU, one flow or one slave of a bond on a host with more to spread over: the ECMP suggestion",
				analyse: func(_ context.Context, p *play) {
					p.found = append(p.found, ECMPSuggestions(p.found, p.r.Bench, p.snaps)...)
				}},
		}},
		// PlanProbes plans them in this order.
		{Name: "targeted probes", start: planTargeted, Steps: []Step{
			probeStep(&mtu.Def, nil, (*Report).runMTU),
			probeStep(&icmpburst.Def, nil, (*Report).runICMPBurst),
			probeStep(&udppath.Def, nil, (*Report).runUDPOutside),
			probeStep(&shaping.Def, nil, (*Report).runShaping),
		}},
		// What the short probes left unexplained and load-dependent gets the
		// long run; collapse cycles it finds get the shaping sweep, unless
		// they are a loss-based sender's own (no knee to cap below).
		{Name: "long run", Steps: []Step{
			probeStep(&bench.LongRunDef, longRunPlanned, (*Report).runLongRun),
			probeStep(&shaping.Def, sweepPlanned, (*Report).runShaping),
			{Name: "phase-comparisons",
				Doc: "on a path whose own underlay cycles, a collapse only the tunnel showed compares runs taken in different phases: it is dropped",
				when: func(p *play) (ProbePlan, bool) {
					lr := ProbeResult[*bench.LongRun](p.r, bench.LongRunDef)
					return ProbePlan{}, lr != nil && lr.PathCycles
				},
				analyse: func(_ context.Context, p *play) {
					var dropped bool
					if p.found, dropped = withoutPhaseComparisons(p.found); dropped {
						p.r.NotJudged = append(p.r.NotJudged, phaseLine)
					}
				}},
		}},
	}
}

// probeStep is a targeted probe's step: its definition (name, what it needs,
// what it raises), when it runs (nil: when its round's start planned it) and
// doctor's runner of it on the evidence.
func probeStep(def *probe.Def, when func(*play) (ProbePlan, bool), measure runner) Step {
	return Step{Name: string(def.Name), Doc: def.Doc, Raises: def.Raises, Probe: def, when: when, measure: measure}
}

// noFarEnd says what cannot be judged without the other end.
func noFarEnd(p *play) {
	if p.c.Server != nil {
		return
	}
	p.r.Threshold = "not applied: without --server nothing was measured"
	p.r.NotJudged = append(p.r.NotJudged,
		"throughput: tunnel against underlay needs the other end (--server)",
		"cross-host checks: MTU agreement, handshakes and what one end sent against what the other received need both ends",
		"MSS stepping through the tunnel needs an iperf3 server on the other end")
}

// planTargeted plans the round's targeted probes on the judged findings.
func planTargeted(p *play) {
	r := p.r
	p.planned = PlanProbes(r.Status == StatusHealthy, r.Findings, r.Measured, r.Bench, snapOf(p.snaps, r.Client))
	if slices.ContainsFunc(r.Findings, refusesNewFlows) {
		r.NotJudged = append(r.NotJudged, "targeted probes (MTU search, icmp-burst): a connection tracking table is full, "+
			"so the kernel drops new flows and the probes' losses would prove nothing; fix the table first")
	}
}

// longRunPlanned calls for the long run (longRunPlan), unless a full
// connection tracking table would drop its flows.
func longRunPlanned(p *play) (ProbePlan, bool) {
	r := p.r
	why, dir := longRunPlan(r.Findings, r.Measured, r.Bench, p.snaps, p.c.Thorough)
	if why == "" || slices.ContainsFunc(r.Findings, refusesNewFlows) {
		return ProbePlan{}, false
	}
	return ProbePlan{Why: why, Directions: []string{dir}}, true
}

// sweepPlanned calls for the shaping sweep after the long run's collapse
// cycles (sweepAfter), once; a CPU limit, which explains the cycles, is
// said instead.
func sweepPlanned(p *play) (ProbePlan, bool) {
	r := p.r
	why := sweepAfter(ProbeResult[*bench.LongRun](r, bench.LongRunDef))
	if why == "" || slices.ContainsFunc(r.Probes, func(x ProbeRun) bool { return x.Probe == catalog.ProbeShaping }) {
		return ProbePlan{}, false
	}
	if cpuLimited(r.Findings) {
		r.NotJudged = append(r.NotJudged, noSweepLine)
		return ProbePlan{}, false
	}
	return ProbePlan{Why: why}, true
}
