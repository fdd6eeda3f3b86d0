package doctor

import (
	"bytes"
	"context"
	"slices"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// duringBench names the interval the counters below grew in.
const duringBench = "during the bench"

// cpuLimitsAfterBench reads each end's CPU quotas and /proc/stat again after
// the bench and judges what grew since the snapshot taken just before it:
// the periods a tunnel's process ran out of its cgroup's quota, and the time
// the hypervisor stole. A quota or steal that did not bite during the bench
// is no finding here (the passive checks judge the counters since boot).
func (r *Report) cpuLimitsAfterBench(ctx context.Context, c *Config, snaps []*facts.Snapshot) []finding.Finding {
	var out []finding.Finding
	for _, t := range []target.Target{c.Client, c.Server} {
		s := snapOf(snaps, t.String())
		if s == nil {
			continue
		}
		limits, _ := collect.CPULimits(ctx, t)
		out = append(out, throttledDuring(s.Host, s.CPULimits, limits)...)
		if b, ok := collect.ReadFiles(ctx, t, "/proc/stat")["/proc/stat"]; ok {
			if after, err := parse.ParseProcStat(bytes.NewReader(b)); err == nil {
				if f, ok := check.CPUStealFinding(s.Host, s.CPU, after, duringBench); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// throttledDuring judges each limit read after the bench by what its
// counters grew since before it (the same process and cgroup); a process
// the bench started (an iperf3 server) is judged by its counters as they
// are, which its cgroup gathered since it was made. It is pure.
func throttledDuring(host string, before, after []facts.CPULimit) []finding.Finding {
	var out []finding.Finding
	for _, a := range after {
		during := "since the cgroup was made"
		if i := slices.IndexFunc(before, func(b facts.CPULimit) bool { return b.PID == a.PID && b.Dir == a.Dir }); i >= 0 {
			b := before[i]
			a.Periods, a.Throttled, a.ThrottledUsec = grown(a.Periods, b.Periods), grown(a.Throttled, b.Throttled), grown(a.ThrottledUsec, b.ThrottledUsec)
			during = duringBench
		}
		if f, ok := check.CPUQuotaFinding(host, a, during); ok {
			out = append(out, f)
		}
	}
	return out
}

func grown(a, b uint64) uint64 {
	if a < b {
		return 0 // the cgroup was made anew
	}
	return a - b
}

// cpuLimited reports a CPU quota or stolen CPU time found on either end: it
// explains collapse cycles, so a tbf cap below their "knee" would hide the
// cause, not prove one.
func cpuLimited(fs []finding.Finding) bool {
	return slices.ContainsFunc(fs, func(f finding.Finding) bool {
		return (f.ID == check.CPUQuotaThrottled || f.ID == check.CPUSteal) && f.Severity >= finding.Warning
	})
}

// noSweepLine says why no cap was swept below a knee.
const noSweepLine = "the knee (shape-sweep): the tunnel's CPU is limited (cpu.quota-throttled, cpu.steal), which explains collapse " +
	"cycles; a cap below them would hide the limit, not prove a knee"
