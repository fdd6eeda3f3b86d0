package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

// ParallelStreams is the parallel run's stream count: as many as the tuning
// guide's and bench's parallel runs.
const ParallelStreams = 4

// explainsInstability: a warning or critical cause at least this large
// already accounts for a slow or unsteady tunnel (CUBIC under loss, a
// buffer that drops, a black hole): no long run is needed to find one.
const explainsInstability = 0.4

// longRunPlan says whether the evidence calls for the long run and in which
// direction: with --thorough always; otherwise when the short bench was slow
// or unsteady, nothing large enough explains it, and something load-
// dependent is there (a userspace implementation, a CPU near its limit,
// receive processing on one CPU, a shaper, buffer or backlog drops, an
// oscillation). A healthy, steady pair keeps its short doctor. It is pure.
func longRunPlan(fs []finding.Finding, m Measured, rep *bench.Report, snaps []*facts.Snapshot, thorough bool) (why, dir string) {
	if !m.Benched || m.Stalled || len(m.UnderlayFailed) > 0 || rep == nil {
		return "", ""
	}
	dir = worstDirection(m, rep)
	if thorough {
		return "--thorough: collapse cycles and many flows need longer and parallel runs than the bench's", dir
	}
	// Slow by the ratio, or unsteady: a cause the ratio cannot show (an ICMP
	// limit, a stale route) is not what a long run looks for.
	unsteady := unsteadyRuns(rep)
	if !shortOfUnderlay(m) && len(unsteady) == 0 {
		return "", ""
	}
	for _, f := range fs {
		d := doctorOf(f.ID)
		// A collapse only the tunnel's packets meet names no mechanism: a
		// knee's cycles may be it, which only the long run shows.
		if f.ID == catalog.WGSpecificCollapse {
			continue
		}
		if d.Role == catalog.Cause && f.Severity >= finding.Warning && impactOf(f) >= explainsInstability {
			return "", ""
		}
	}
	evidence := loadEvidence(fs, snaps)
	if evidence == "" {
		return "", ""
	}
	what := "slow"
	if len(unsteady) > 0 {
		what = "unsteady (" + strings.Join(unsteady, ", ") + ")"
	}
	return fmt.Sprintf("%d-second runs were %s with nothing found that explains it, and %s: a %d-second run shows collapse cycles a short one cannot, parallel streams what one flow cannot",
		rep.Seconds, what, evidence, bench.LongSeconds), dir
}

// shortOfUnderlay reports a direction whose tunnel fell below the expected
// share of its underlay.
func shortOfUnderlay(m Measured) bool {
	for _, d := range []bench.DirRate{m.Up, m.Down} {
		if d.Underlay > 0 && d.Ratio() < m.Expected {
			return true
		}
	}
	return false
}

// worstDirection is the direction with the lower tunnel/underlay ratio (an
// unsteady direction first).
func worstDirection(m Measured, rep *bench.Report) string {
	for _, r := range rep.Runs {
		if r.Path == bench.PathTunnel && r.Streams == 1 && r.UDPMbit == 0 && (r.Stats.Collapses > 0 || r.Stats.CV >= bench.OscillationCV) {
			return r.Direction
		}
	}
	if m.Down.Underlay > 0 && m.Down.Ratio() < m.Up.Ratio() {
		return bench.Download
	}
	return bench.Upload
}

// unsteadyRuns names the bench's tunnel runs whose per-second rate collapsed
// or varied like an oscillating one.
func unsteadyRuns(rep *bench.Report) []string {
	var out []string
	for _, r := range rep.Runs {
		if r.Path == bench.PathTunnel && r.Result != nil && r.UDPMbit == 0 && (r.Stats.Collapses > 0 || r.Stats.CV >= bench.OscillationCV) {
			out = append(out, r.Spec.String())
		}
	}
	return out
}

// loadEvidence names what makes throughput depend on load (the findings'
// catalog Load, and shapers), "" for nothing.
func loadEvidence(fs []finding.Finding, snaps []*facts.Snapshot) string {
	var out []string
	seen := map[finding.ID]bool{}
	for _, f := range fs {
		if w := doctorOf(f.ID).Load; w != "" && !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, w)
		}
	}
	for _, s := range snaps {
		for _, l := range s.Links {
			switch l.Qdisc {
			case "tbf", "htb", "cake", "hfsc":
				out = append(out, fmt.Sprintf("a %s shaper on %s of %s", l.Qdisc, l.Name, s.Host))
			}
		}
	}
	return strings.Join(out, ", ")
}

// sweepAfter says why the long run's collapse cycles call for the shaping
// sweep, "" when they do not: no cycles, a loss-based sender's own, which no
// cap below a knee steadies, or the path's, which the underlay shares. It is
// pure.
func sweepAfter(lr *bench.LongRun) string {
	if lr == nil || !lr.Cycles.Oscillating() || lr.LossLimited || lr.PathCycles {
		return ""
	}
	return fmt.Sprintf("the long run collapses every %.0f s (%.0f%% deep): a tbf cap below the knee may hold steadier", lr.Cycles.PeriodSeconds, 100*lr.Cycles.Depth)
}

// longSingle is one stream in dir over path for seconds, read as a run.
func (r *Report) longSingle(ctx context.Context, c *Config, path, dir string, seconds int) (bench.Run, error) {
	spec, addr := bench.Spec{Path: path, Direction: dir, Streams: 1}, r.endpoints.TunnelAddr
	if path == bench.PathUnderlay {
		addr = r.endpoints.UnderlayAddr
	}
	c.progress("long run: %s for %d s", spec, 1+seconds)
	res, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: addr, Port: c.Port, Seconds: seconds, Omit: 1,
		Reverse: dir == bench.Download, Timeout: time.Duration(seconds+25) * time.Second})
	if err != nil {
		return bench.Run{}, err
	}
	return bench.Run{Spec: spec, Addr: addr, Result: res, Stats: bench.Summarise(res)}, nil
}

// runLongRun runs the long single-stream run and the parallel run in dir,
// and reads the collapse cycles. Cycles seen are checked on the underlay
// alone (the path's, when it shares them) and, when the first run held fewer
// than two of them, measured again for two: the sweep compares caps with the
// mean of whole cycles.
func (r *Report) runLongRun(ctx context.Context, c *Config, p ProbePlan, _ []*facts.Snapshot) ([]finding.Finding, string, error) {
	dir := p.Directions[0]
	lr := &bench.LongRun{Direction: dir}
	var err error
	if lr.Single, err = r.longSingle(ctx, c, bench.PathTunnel, dir, bench.LongSeconds); err != nil {
		return nil, "", err
	}
	lr.Cycles = bench.CyclesOf(lr.Single.Result)
	r.SetResult(bench.LongRunDef, lr)
	if period := lr.Cycles.SuggestedPeriod(); period > 0 && r.endpoints.UnderlayAddr != "" {
		if u, uerr := r.longSingle(ctx, c, bench.PathUnderlay, dir, bench.UnderlaySeconds(lr.Cycles)); uerr == nil {
			uc := bench.CyclesOf(u.Result)
			lr.Underlay, lr.UnderlayCycles, lr.PathCycles = &u, &uc, bench.SharedCycle(lr.Cycles, uc)
		}
		if n := bench.TwoCyclesSeconds(period); !lr.PathCycles && n > lr.Cycles.Seconds+1 {
			if again, aerr := r.longSingle(ctx, c, bench.PathTunnel, dir, n); aerr == nil {
				lr.Single, lr.Cycles = again, bench.CyclesOf(again.Result)
				if lr.UnderlayCycles != nil {
					// The longer run's period is the one to compare: a cycle
					// the first run caught once may be the underlay's.
					lr.PathCycles = bench.SharedCycle(lr.Cycles, *lr.UnderlayCycles)
				}
			}
		}
	}
	many := bench.Spec{Path: bench.PathTunnel, Direction: dir, Streams: ParallelStreams}
	c.progress("long run: %s for %d s", many, 1+c.Seconds)
	par, perr := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: r.endpoints.TunnelAddr, Port: c.Port, Seconds: c.Seconds, Omit: 1,
		Reverse: dir == bench.Download, Parallel: ParallelStreams})
	if perr == nil {
		lr.Parallel = &bench.Run{Spec: many, Addr: r.endpoints.TunnelAddr, Result: par, Stats: bench.Summarise(par)}
		lr.ParallelRatio = bench.ParallelGain(lr.Cycles, lr.Parallel)
	}
	summary := fmt.Sprintf("%s, 1 stream for %d s: mean %.1f Mbit/s, %d collapses", dir, lr.Cycles.Seconds, lr.Cycles.MeanMbit, lr.Cycles.Collapses)
	if lr.Cycles.Collapses >= 2 {
		summary += fmt.Sprintf(" every %.0f s, %.0f → %.0f Mbit/s (%.0f%% deep)", lr.Cycles.PeriodSeconds, lr.Cycles.HighMbit, lr.Cycles.LowMbit, 100*lr.Cycles.Depth)
	}
	if uc := lr.UnderlayCycles; uc != nil {
		summary += fmt.Sprintf("; the underlay alone for %d s: %d collapses", uc.Seconds, uc.Collapses)
		if lr.PathCycles {
			summary += fmt.Sprintf(" every %.0f s: the path cycles", uc.PeriodSeconds)
		}
	}
	if lr.Parallel != nil {
		summary += fmt.Sprintf("; %d streams %.1f Mbit/s (%.1f× one)", ParallelStreams, lr.Parallel.Stats.Mbit, lr.ParallelRatio)
	} else {
		summary += fmt.Sprintf("; the %d-stream run failed: %v", ParallelStreams, perr)
	}
	sender, iface := r.Client, r.endpoints.ClientInterface
	if dir == bench.Download {
		sender, iface = r.Server, r.endpoints.ServerInterface
	}
	fs := longRunFindings(lr, r.Client, r.Server, sender, iface)
	if lr.LossLimited {
		summary += fmt.Sprintf("; one %s stream is loss-limited", lr.Single.Result.Congestion)
	}
	return fs, summary, nil
}

// phaseLine says why a collapse only the tunnel showed is not judged on a
// path that cycles.
const phaseLine = "a collapse only the tunnel showed (wg.specific-collapse): the path itself cycles (the long run's underlay " +
	"collapsed alike), so the short tunnel run and the UDP run outside it may have fallen in different phases"

// withoutPhaseComparisons drops wg.specific-collapse, which compares a short
// tunnel run with a UDP run outside it taken seconds apart: on a path that
// cycles (the path-cycles lab: a tunnel at 42.8 Mbit/s in a low phase, UDP
// at 133.5 of 133.6 in a high one) that proves nothing about WireGuard. It
// is pure; dropped says whether it did.
func withoutPhaseComparisons(found []finding.Finding) (out []finding.Finding, dropped bool) {
	for _, f := range found {
		if f.ID == catalog.WGSpecificCollapse {
			dropped = true
			continue
		}
		out = append(out, f)
	}
	return out, dropped
}

// longRunFindings reads what the long run proves, sent by sender through iface:
// a cycle the path shares, a loss-based sender's own limit (LossLimited),
// else collapse cycles.
func longRunFindings(lr *bench.LongRun, client, server, sender target.Spec, iface string) []finding.Finding {
	if lr.PathCycles && lr.Underlay != nil && lr.UnderlayCycles != nil {
		if f := bench.PathCycleFinding(sender, lr.Direction, lr.Underlay.Addr, lr.Cycles, *lr.UnderlayCycles); f != nil {
			return []finding.Finding{*f}
		}
	}
	if f := bench.LossLimited(sender, lr.Single, lr.Cycles, lr.Parallel); f != nil {
		lr.LossLimited = true
		return []finding.Finding{*f}
	}
	if f := bench.CycleFinding(client.String(), server.String(), lr.Direction, sender, iface, lr.Cycles); f != nil {
		return []finding.Finding{*f}
	}
	return nil
}
