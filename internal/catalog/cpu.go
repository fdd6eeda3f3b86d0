package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	CPUIRQImbalance     ID = "cpu.irq-imbalance"
	CPUQuotaThrottled   ID = "cpu.quota-throttled"
	CPUSaturated        ID = "cpu.saturated"
	CPUSoftirqImbalance ID = "cpu.softirq-imbalance"
	CPUSteal            ID = "cpu.steal"
)

// cpuEntries are the catalog's entries of one area (Entries, catalog.go):
// The CPUs that carry the tunnel: saturation, interrupts, quotas, steal.
var cpuEntries = []Entry{
	{
		ID:         CPUIRQImbalance,
		Title:      "The uplink's interrupts pile onto one CPU",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Every interrupt of the NIC starts receive processing on the CPU that took
it. With all of the uplink's queues interrupting one CPU, that CPU carries the
tunnel's receive work alone: it saturates, its backlog overflows, packets
arrive out of order and TCP backs off while the other CPUs idle.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.45, Side: Receiver, Bench: InBench, Verify: Measured},
	},
	{
		ID:         CPUQuotaThrottled,
		Title:      "A CPU quota throttles the tunnel's process: its cgroup runs out of CPU time while no CPU looks busy",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A userspace WireGuard process in a container or a systemd unit with a CPU
quota (docker --cpus, CPUQuota=, a Kubernetes limit) may use that much CPU time
per period and then waits for the next one while the tunnel's packets queue
and drop. The tunnel runs at a fraction of the link, no CPU looks busy, and
the rate stalls and recovers like a tunnel pushed past a knee: a rate cap
below that "knee" hides the limit instead of lifting it.`,
		Cases: []string{CaseRemoteUsers},
		// It underlies the knee a cap sweep would "prove": the quota is the
		// cure, the cap a workaround that costs throughput.
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: InBench, Verify: Measured,
			Underlies: []finding.ID{ThroughputCollapseKnee}},
	},
	{
		ID:         CPUSaturated,
		Title:      "A CPU is the ceiling: above 90% busy while the tunnel carries traffic",
		Severities: []finding.Severity{finding.Warning},
		Why: `When a CPU is the ceiling, no network tuning makes the tunnel faster: the
other findings' gains are capped by it. The way out is spreading the work or a
faster WireGuard implementation.`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Environment, Impact: 0.5, Side: Both, Bench: InBench, Verify: Measured, Load: "a CPU near its limit"},
	},
	{
		ID:         CPUSoftirqImbalance,
		Title:      "Packet processing piles onto one CPU",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Receive processing for the whole tunnel runs on one CPU. When that CPU
saturates, its backlog overflows, packets are dropped and TCP backs off, so
throughput oscillates while the other CPUs idle.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.45, Side: Receiver, Bench: InBench, Verify: Measured, Load: "receive processing on one CPU"},
	},
	{
		ID:         CPUSteal,
		Title:      "The hypervisor steals CPU time: the tunnel waits for CPUs this machine never sees busy",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `On an overcommitted virtual machine the hypervisor runs other guests while
this one has work: the tunnel's process and its packets wait, the guest's own
load figures show idle CPUs, and the tunnel runs below its link with stalls a
rate cap would only hide.`,
		Cases: []string{CaseRemoteUsers},
		// The machine's, not the network's: the lab shares one machine's CPUs.
		// Steal's share of the CPU time is the most it can take from a
		// CPU-bound end: 5% cannot explain a tunnel 18% short.
		Doctor: Doctor{Role: Environment, Impact: 0.6, Side: Both, Bench: InBench, Verify: Measured,
			Underlies: []finding.ID{ThroughputCollapseKnee}, Bound: Bound{Key: "steal / all CPU time", As: ShareTaken}},
	},
}
