package check

import (
	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// cpuEntries add to internal/catalog/cpu.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// The CPUs that carry the tunnel: saturation, interrupts, quotas, steal.
var cpuEntries = []Entry{
	{
		ID:    catalog.CPUIRQImbalance,
		Check: &irqImbalance,
		Remedies: []Remedy{
			{Kind: remedy.KindIRQAffinity, Params: map[string]Values{
				"irq":  Named("an uplink queue's interrupt").On(proposedBy(&irqImbalance, remedy.KindIRQAffinity)),
				"name": Named("its name in /proc/interrupts"), "cpus": Named("the CPU its queue gets")}},
			{Kind: remedy.KindRPS, Params: map[string]Values{"device": Named("an uplink with one queue").On(proposedBy(&irqImbalance, remedy.KindRPS)),
				"mask": Named("the mask of every CPU").On(allCPUs)}},
			{Kind: remedy.KindSysctl, Params: map[string]Values{"key": OneOf("net.core.netdev_tstamp_prequeue"), "value": OneOf("0")}},
		},
		Example: Example{
			Host: "a 4-CPU host whose uplink eth0's four queues all interrupt CPU 0",
			Fixes: func() []finding.Fix {
				load := irqLoad{dev: "eth0", rows: []facts.IRQ{{IRQ: "120", Name: "eth0-TxRx-0", PerCPU: []uint64{9e6, 0, 0, 0}},
					{IRQ: "121", Name: "eth0-TxRx-1", PerCPU: []uint64{8e6, 0, 0, 0}}}}
				fs, _ := spreadQueueFixes(load, 4)
				return fs
			},
		},
	},
	{
		ID:    catalog.CPUQuotaThrottled,
		Check: &cpuQuota,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Doc: `Reads the quota's cpu.stat again after its bench: the
periods the cgroup ran out of its quota during the bench, judged as the check
judges them since the cgroup was made.`}},
		// No remedy: the quota belongs to whoever runs the container or unit,
		// and its manager would set it again; the fix names the commands.
		Example: Example{
			Host: "wireguard-go runs in docker container 3f2a9c81d0e4 with --cpus 0.5 and was throttled in 812 of 900 periods",
			Fixes: func() []finding.Fix {
				return cpuQuotaFixes(facts.CPULimit{Process: "wireguard-go", Interface: "wg0", Version: 2, Cgroup: "/system.slice/docker-3f2a9c81d0e4.scope",
					Dir: "/sys/fs/cgroup/system.slice/docker-3f2a9c81d0e4.scope", QuotaUsec: 50000, PeriodUsec: 100000})
			},
		},
	},
	{
		ID: catalog.CPUSaturated,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Doc: `Samples /proc/stat on both ends while the tunnel
carries a bench run. A CPU above 90% busy during a tunnel run is the ceiling:
encryption and packet processing for a userspace or single-queue tunnel pile
onto one core, so the tunnel cannot go faster however the network is tuned.
The tuning guide's first question. Fix: spread the load (RPS, IRQ affinity),
or accept the ceiling; in a lab that shares one machine, it describes the
machine rather than the tunnel.`}},
		// No remedy: the bench names the CPU, not what keeps it busy; when it
		// is receive processing, cpu.softirq-imbalance proposes RPS.
		Example: Example{
			Host: "a 4-CPU host with one CPU 95% busy during a tunnel run",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{
					Description: "See what keeps the CPU busy (a userspace WireGuard process, kernel WireGuard's wg-crypt workers, softirq, another program) during a transfer",
					Commands:    []string{"top -b -n 1 -H | head -20", "cat /proc/net/softnet_stat"},
				}}
			},
		},
	},
	{
		ID:    catalog.CPUSoftirqImbalance,
		Check: &softirqImbalance,
		Remedies: []Remedy{
			{Kind: remedy.KindRPS, Params: map[string]Values{"device": Named("an uplink").On(anUplink), "mask": Named("the mask of every CPU").On(allCPUs)}},
		},
		Example: Example{
			Host:  "a 4-CPU host whose uplink eth0 has no RPS mask",
			Fixes: func() []finding.Fix { return rpsFix(exampleHost, "eth0", cpuMask(4)) },
		},
	},
	{
		ID:    catalog.CPUSteal,
		Check: &cpuSteal,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Doc: `Reads /proc/stat again after its bench: the share of CPU
time stolen during the bench, judged as the check judges it since boot.`}},
		Example: Example{
			Host: "a VPS whose CPUs were stolen 31% of the time during the bench",
			Fixes: func() []finding.Fix {
				f, _ := CPUStealFinding(hostOf(exampleHost), nil, []facts.CPUTimes{{CPU: "cpu", User: 4000, Idle: 2900, Steal: 3100}}, "")
				return f.Fixes
			},
		},
	},
}
