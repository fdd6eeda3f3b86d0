package doctor

import (
	"bytes"
	"context"
	"slices"

	"github.com/wgperf/wgperf/internal/catalog"
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
		if s := snapOf(snaps, target.Of(t)); s != nil {
			out = append(out, cpuLimitFindings(s.Host, cpuNow{t: t, limits: s.CPULimits, cpu: s.CPU}, readCPU(ctx, t))...)
		}
	}
	return out
}

// cpuNow is a host's CPU quotas (its processes' cgroups) and per-CPU times
// at one moment: the ends' from their snapshots, a hub's read by doctor.
type cpuNow struct {
	t      target.Target
	limits []facts.CPULimit
	cpu    []facts.CPUTimes
}

func readCPU(ctx context.Context, t target.Target) cpuNow {
	h := cpuNow{t: t}
	h.limits, _ = collect.CPULimits(ctx, t)
	if b, ok := collect.ReadFiles(ctx, t, "/proc/stat")["/proc/stat"]; ok {
		h.cpu, _ = parse.ParseProcStat(bytes.NewReader(b))
	}
	return h
}

// cpuLimitFindings judges what the bench cost a host's CPU between two
// reads: the periods a process ran out of its cgroup's quota, and the time
// the hypervisor stole.
func cpuLimitFindings(host target.Spec, before, after cpuNow) []finding.Finding {
	out := throttledDuring(host, before.limits, after.limits)
	if len(after.cpu) > 0 {
		if f, ok := check.CPUStealFinding(host, before.cpu, after.cpu, duringBench); ok {
			out = append(out, f)
		}
	}
	return out
}

// throttledDuring judges each limit read after the bench by what its
// counters grew since before it (the same process and cgroup); a process
// the bench started (an iperf3 server) is judged by its counters as they
// are, which its cgroup gathered since it was made. It is pure.
func throttledDuring(host target.Spec, before, after []facts.CPULimit) []finding.Finding {
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
		return (f.ID == catalog.CPUQuotaThrottled || f.ID == catalog.CPUSteal) && f.Severity >= finding.Warning
	})
}

// noSweepLine says why no cap was swept below a knee.
const noSweepLine = "the knee (shape-sweep): the tunnel's CPU is limited (cpu.quota-throttled, cpu.steal), which explains collapse " +
	"cycles; a cap below them would hide the limit, not prove a knee"
