package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// A CPU quota is a finding when its cgroup ran out of it in at least
// quotaThrottledPct percent of its periods, and at least quotaMinThrottled
// times (a handful of throttled periods at start-up is no limit); from
// quotaCriticalPct percent the process spends most periods waiting.
const (
	quotaMinThrottled  = 10
	quotaThrottledPct  = 5
	quotaCriticalPct   = 50
	stealWarnPct       = 5.0  // of all CPU time: the hypervisor gives the CPUs to others
	stealCriticalPct   = 20.0 // a fifth of every CPU gone
	stealMinTotalTicks = 1000 // ten seconds of one CPU at USER_HZ 100: less says nothing
)

var cpuQuota = Check{
	Doc: `Reads the CPU quota of the cgroup each userspace WireGuard process
(wireguard-go, boringtun: the process holding the interface's TUN) and iperf3
runs in, the tightest of its cgroup and their ancestors (cgroup v2 cpu.max,
v1 cpu.cfs_quota_us / cpu.cfs_period_us: docker --cpus, systemd CPUQuota=,
a Kubernetes CPU limit), and that cgroup's cpu.stat. A quota its cgroup ran
out of in at least 5% of its periods (and 10 times) is a warning, in half of
them critical: the process waits for the next period while the tunnel's
packets queue, so the tunnel runs at a fraction of the link while no CPU looks
busy, and it stalls and recovers like a tunnel pushed past a knee (the remote
users' case had its tunnel on a VPS). Counters are cumulative since the cgroup
was made; doctor counts them again during its bench. A quota never reached is
no finding. Fix: raise or remove the quota where it is set, or use the
kernel's WireGuard, which has no process to limit.`,
	Run: runCPUQuota,
}

func runCPUQuota(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	var out []finding.Finding
	for _, l := range s.CPULimits {
		if f, ok := CPUQuotaFinding(hostOf(s), l, ""); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// CPUQuotaFinding is cpu.quota-throttled for one process's limit, whose
// counters are either cumulative (during "") or what grew during a
// measurement (during names it: "during the bench"); ok is false when the
// quota was not reached often enough to matter. It is pure.
func CPUQuotaFinding(host target.Spec, l facts.CPULimit, during string) (finding.Finding, bool) {
	if l.QuotaUsec <= 0 || l.PeriodUsec <= 0 || l.Throttled < quotaMinThrottled || l.Throttled*100 < quotaThrottledPct*l.Periods {
		return finding.Finding{}, false
	}
	pct := 100 * float64(l.Throttled) / float64(max(l.Periods, 1))
	sev := finding.Warning
	if pct >= quotaCriticalPct {
		sev = finding.Critical
	}
	when := "since the cgroup was made"
	if during != "" {
		when = during
	}
	who := display(l.Process)
	if l.Interface != "" {
		who += " (serving " + display(l.Interface) + ")"
	}
	cpus := float64(l.QuotaUsec) / float64(l.PeriodUsec)
	return finding.Finding{
		ID: catalog.CPUQuotaThrottled, Severity: sev, Host: host, Interface: l.Interface,
		Title: fmt.Sprintf("%s is limited to %s CPU by its cgroup %s (%s): it was throttled in %d of %d periods %s",
			who, trimFloat(cpus), display(l.Cgroup), quotaText(l), l.Throttled, l.Periods, when),
		Detail: "The cgroup may use " + quotaText(l) + " of CPU time per period, all its CPUs together; once it has, every process in it " +
			"waits for the next period while the tunnel's packets queue and drop. The tunnel runs at a fraction of the link while " +
			"no CPU looks busy, and its rate stalls and recovers like a tunnel pushed past a knee: a rate cap would only hide it.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: cpuMaxFile(l), Key: l.Cgroup, Value: quotaText(l)}.Of(cpus, finding.Count),
			finding.Evidence{Source: l.Dir + "/cpu.stat", Key: "nr_throttled / nr_periods " + when, Value: fmt.Sprintf("%d / %d (%.0f%%)", l.Throttled, l.Periods, pct),
				Threshold: fmt.Sprintf("< %d%% of periods", quotaThrottledPct)}.Of(pct, finding.Percent),
			finding.Evidence{Source: l.Dir + "/cpu.stat", Key: "throttled " + when, Value: fmt.Sprintf("%.1f s", float64(l.ThrottledUsec)/1e6)}.Of(float64(l.ThrottledUsec)/1e6, finding.Seconds),
		},
		Fixes: cpuQuotaFixes(l),
	}, true
}

// quotaText is the quota as its file says it: "cpu.max 50000 100000" or
// "cpu.cfs_quota_us 50000, cpu.cfs_period_us 100000".
func quotaText(l facts.CPULimit) string {
	if l.Version == 2 {
		return fmt.Sprintf("cpu.max %d %d", l.QuotaUsec, l.PeriodUsec)
	}
	return fmt.Sprintf("cpu.cfs_quota_us %d, cpu.cfs_period_us %d", l.QuotaUsec, l.PeriodUsec)
}

func cpuMaxFile(l facts.CPULimit) string {
	if l.Version == 2 {
		return l.Dir + "/cpu.max"
	}
	return l.Dir + "/cpu.cfs_quota_us"
}

// cpuQuotaFixes raise the quota where it is set: the systemd unit or docker
// container its cgroup is named after, else the cgroup's file (which the
// manager that set it may write again), and the kernel module, which has no
// process to limit. None is applied by wgperf: the quota belongs to whoever
// runs the container or unit.
func cpuQuotaFixes(l facts.CPULimit) []finding.Fix {
	double := 2 * float64(l.QuotaUsec) / float64(l.PeriodUsec)
	var cmds []string
	if unit := cgroupUnit(l.Cgroup); unit != "" {
		cmds = append(cmds, shell.Join("systemctl", "set-property", unit, fmt.Sprintf("CPUQuota=%.0f%%", 100*double)))
	}
	if id := dockerContainer(l.Cgroup); id != "" {
		cmds = append(cmds, shell.Join("docker", "update", "--cpus", trimFloat(double), id))
	}
	write := shell.Join("echo", fmt.Sprintf("%d %d", 2*l.QuotaUsec, l.PeriodUsec)) + " > " + shell.Quote(l.Dir+"/cpu.max")
	if l.Version == 1 {
		write = shell.Join("echo", fmt.Sprint(2*l.QuotaUsec)) + " > " + shell.Quote(l.Dir+"/cpu.cfs_quota_us")
	}
	cmds = append(cmds, write+"   # the cgroup's own file: its manager may set it again")
	out := []finding.Fix{{
		Description: fmt.Sprintf("Raise the CPU quota of %s (here doubled, to %s CPU) or remove it, where it is set", display(l.Cgroup), trimFloat(double)),
		Commands:    cmds,
	}}
	if l.Interface != "" {
		out = append(out, kernelModuleFix(l.Interface))
	}
	return out
}

// kernelModuleFix moves an interface to the kernel's WireGuard: no process to
// limit or starve, and less CPU per packet. wg-quick uses the module when it
// loads.
func kernelModuleFix(iface string) finding.Fix {
	return finding.Fix{
		Description: "Use the kernel's WireGuard where it exists (Linux 5.6 and later): it has no process to limit and costs less CPU per packet",
		Commands:    []string{"modprobe wireguard", shell.Join("wg-quick", "down", iface) + " && " + shell.Join("wg-quick", "up", iface)},
	}
}

// cgroupUnit is the systemd unit a cgroup path is named after
// ("/system.slice/wg-quick@wg0.service" → "wg-quick@wg0.service"), "" for none.
func cgroupUnit(cgroup string) string {
	parts := strings.Split(cgroup, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if p := parts[i]; strings.HasSuffix(p, ".service") || strings.HasSuffix(p, ".scope") && !strings.HasPrefix(p, "docker-") {
			return p
		}
	}
	return ""
}

// dockerContainer is the container ID a cgroup path names (cgroupfs
// "/docker/ID", systemd "/system.slice/docker-ID.scope"), "" for none.
func dockerContainer(cgroup string) string {
	parts := strings.Split(cgroup, "/")
	for i, p := range parts {
		id := ""
		switch {
		case p == "docker" && i+1 < len(parts):
			id = parts[i+1]
		case strings.HasPrefix(p, "docker-") && strings.HasSuffix(p, ".scope"):
			id = strings.TrimSuffix(strings.TrimPrefix(p, "docker-"), ".scope")
		}
		if isHex(id) {
			return id
		}
	}
	return ""
}

func isHex(s string) bool {
	if len(s) < 12 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// display shows a name from the host on one line, quoted where a shell would need it.
func display(s string) string { return shell.Comment(shell.Quote(s)) }

// trimFloat prints 0.5, 2 or 0.05 without trailing zeros.
func trimFloat(x float64) string {
	s := strings.TrimRight(fmt.Sprintf("%.2f", x), "0")
	return strings.TrimSuffix(s, ".")
}

var cpuSteal = Check{
	Doc: `Reads the steal column of /proc/stat: time the hypervisor ran another guest
while this one had work for the CPU (a small VPS on an overcommitted host). A
warning from 5% of all CPU time, critical from 20%: the tunnel's process and
its packets wait for a CPU that the guest's own load figures never show busy,
so the tunnel runs below the link and stalls now and then like a tunnel pushed
past a knee (the remote users' case had its tunnel on a VPS). Counters are
since boot; doctor counts them again during its bench. Fix: a plan with
dedicated CPUs or another host, and the kernel's WireGuard, which needs less
CPU per packet.`,
	Run: runCPUSteal,
}

func runCPUSteal(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	// No /proc/stat is no steal to judge; cpu.saturated and softnet say why it is missing.
	if f, ok := CPUStealFinding(hostOf(s), nil, s.CPU, ""); ok {
		return []finding.Finding{f}, nil
	}
	return nil, nil
}

// CPUStealFinding is cpu.steal from the aggregate "cpu" line of /proc/stat:
// since boot when before is nil, else what grew between before and after
// (during names it: "during the bench"). It is pure.
func CPUStealFinding(host target.Spec, before, after []facts.CPUTimes, during string) (finding.Finding, bool) {
	a, ok := aggregateCPU(after)
	if !ok {
		return finding.Finding{}, false
	}
	b, _ := aggregateCPU(before)
	steal := sub(a.Steal, b.Steal)
	total := sub(a.User+a.Nice+a.System+a.Idle+a.IOWait+a.IRQ+a.SoftIRQ+a.Steal, b.User+b.Nice+b.System+b.Idle+b.IOWait+b.IRQ+b.SoftIRQ+b.Steal)
	if total < stealMinTotalTicks {
		return finding.Finding{}, false
	}
	pct := 100 * float64(steal) / float64(total)
	if pct < stealWarnPct {
		return finding.Finding{}, false
	}
	sev := finding.Warning
	if pct >= stealCriticalPct {
		sev = finding.Critical
	}
	when := "since boot"
	if during != "" {
		when = during
	}
	return finding.Finding{
		ID: catalog.CPUSteal, Severity: sev, Host: host,
		Title: fmt.Sprintf("The hypervisor took %.0f%% of this machine's CPU time %s (steal)", pct, when),
		Detail: "Steal is time a virtual CPU had work but the hypervisor ran another guest. The tunnel's packets wait for a CPU " +
			"this machine's own load figures never show busy: the tunnel runs below the link and stalls now and then.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/stat", Key: "steal / all CPU time " + when, Value: fmt.Sprintf("%d / %d ticks (%.1f%%)", steal, total, pct),
				Threshold: fmt.Sprintf("< %.0f%%", stealWarnPct)}.Of(pct, finding.Percent),
		},
		Fixes: []finding.Fix{{
			Description: "Get CPUs the hypervisor does not share: a plan with dedicated vCPUs, or another host; ask the provider about overcommit",
			Commands:    []string{"grep '^cpu ' /proc/stat   # the 8th number is steal, in ticks: read it twice to see it grow"},
		}, {
			Description: "Use the kernel's WireGuard where it exists (Linux 5.6 and later): less CPU per packet to wait for",
			Commands:    []string{"modprobe wireguard"},
		}},
	}, true
}

// aggregateCPU is the "cpu" line of /proc/stat (every CPU together).
func aggregateCPU(cpus []facts.CPUTimes) (facts.CPUTimes, bool) {
	for _, c := range cpus {
		if c.CPU == "cpu" {
			return c, true
		}
	}
	return facts.CPUTimes{}, false
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
