package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	ConntrackInvalidDrops  ID = "conntrack.invalid-drops"
	ConntrackTablePressure ID = "conntrack.table-pressure"
	ConntrackTunnelTracked ID = "conntrack.tunnel-tracked"
	KernelDrops            ID = "kernel.drops"
)

// conntrackEntries are the catalog's entries of one area (Entries, catalog.go):
// Connection tracking and the kernel's own drop reasons.
var conntrackEntries = []Entry{
	{
		ID:         ConntrackInvalidDrops,
		Title:      "A firewall rule drops packets conntrack marked invalid",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `A stateful firewall that drops "invalid" packets drops every packet of a
connection conntrack can no longer follow: after reordering or losses it did
not see, or, when it does not pick connections up, after its table was flushed
or a firewall failed over. Those connections stall or end abruptly while new
ones work, which looks like a flaky tunnel.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "connections conntrack loses track of keep working instead of stalling or dying (a short bench seldom meets one)"},
	},
	{
		ID:         ConntrackTablePressure,
		Title:      "Connection tracking table near full or dropping entries",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A full table makes the kernel refuse new flows or evict live ones: new
connections through the tunnel time out while the old ones keep working, which
looks like an intermittent network fault.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Gain: costsThroughFailures, Verify: ConfirmOnly,
			RefusesNewFlows: true},
	},
	{
		ID:         ConntrackTunnelTracked,
		Title:      "Tunnel traffic is connection-tracked although nothing needs it",
		Severities: []finding.Severity{finding.Info},
		Why: `Tracking costs a table entry and per-packet work for every flow in the
tunnel. On a busy hub that is CPU time and table space spent for nothing, and it
brings the table closer to full (conntrack.table-pressure).`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.05, Side: Both, Bench: InBench, Verify: Measured},
	},
	{
		ID:         KernelDrops,
		Title:      "The kernel dropped tunnel traffic for a reason no other finding covers",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Every packet the kernel drops in the tunnel's path is a retransmission and a
congestion signal for the TCP inside: counters show that packets died, the
kernel's reason shows where and why, and names the setting to look at
(rp_filter for IP_RPFILTER, the routes for IP_OUTNOROUTES, the qdisc for
QDISC_DROP).`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.1, Side: Both, Bench: InBench, Verify: Measured},
	},
}
