package check

import (
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// conntrackEntries are the catalog's entries of one area (Catalog, catalog.go):
// Connection tracking and the kernel's own drop reasons.
var conntrackEntries = []Entry{
	{
		ID:         ConntrackInvalidDrops,
		Title:      "A firewall rule drops packets conntrack marked invalid",
		Check:      &conntrackInvalidDrops,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `A stateful firewall that drops "invalid" packets drops every packet of a
connection conntrack can no longer follow: after reordering or losses it did
not see, or, when it does not pick connections up, after its table was flushed
or a firewall failed over. Those connections stall or end abruptly while new
ones work, which looks like a flaky tunnel.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "connections conntrack loses track of keep working instead of stalling or dying (a short bench seldom meets one)"},
		Remedies: []Remedy{
			{Kind: remedy.KindSysctl, Params: map[string]Values{
				"key": OneOf("net.netfilter.nf_conntrack_tcp_loose", "net.netfilter.nf_conntrack_tcp_be_liberal",
					"net.netfilter.nf_conntrack_tcp_ignore_invalid_rst").On(proposedBy(&conntrackInvalidDrops, remedy.KindSysctl)),
				"value": OneOf("1"),
			}},
		},
		Example: Example{
			Host: `"ct state invalid counter drop" dropped 16 packets after a table flush, with nf_conntrack_tcp_loose and nf_conntrack_tcp_be_liberal at 0`,
			Fixes: func() []finding.Fix {
				return append(sysctlFix("Let conntrack pick up connections it has no entry for (the kernel's default): set net.netfilter.nf_conntrack_tcp_loose to 1",
					"net.netfilter.nf_conntrack_tcp_loose", "1"),
					sysctlFix("Let conntrack accept TCP segments outside the window it tracked: set net.netfilter.nf_conntrack_tcp_be_liberal to 1",
						"net.netfilter.nf_conntrack_tcp_be_liberal", "1")...)
			},
		},
	},
	{
		ID:         ConntrackTablePressure,
		Title:      "Connection tracking table near full or dropping entries",
		Check:      &conntrackTablePressure,
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A full table makes the kernel refuse new flows or evict live ones: new
connections through the tunnel time out while the old ones keep working, which
looks like an intermittent network fault.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Gain: costsThroughFailures, Verify: ConfirmOnly,
			RefusesNewFlows: true},
		Remedies: []Remedy{
			{Kind: remedy.KindSysctl, Params: map[string]Values{"key": OneOf("net.netfilter.nf_conntrack_max"), "value": BaseOrDouble(conntrackFloor, conntrackFloor/2, maxInt).On(raises)}},
			// where more than 8 entries share a hash bucket (conntrackChains)
			{Kind: remedy.KindConntrackBuckets, Params: map[string]Values{"buckets": Between(1024, remedy.MaxConntrackBuckets).On(raisesBuckets)}},
			notrack,
		},
		Example: Example{
			Host: "nf_conntrack_max is 65536, and wg0 (UDP port 51820) is tracked although no NAT rule needs it",
			Fixes: func() []finding.Fix {
				return append(sysctlFix("Raise nf_conntrack_max from 65536 to 262144 (set in the initial network namespace)",
					"net.netfilter.nf_conntrack_max", "262144"), notrackFix(exampleHost, exampleWG)...)
			},
		},
	},
	{
		ID:         ConntrackTunnelTracked,
		Title:      "Tunnel traffic is connection-tracked although nothing needs it",
		Check:      &conntrackTunnelTracked,
		Severities: []finding.Severity{finding.Info},
		Why: `Tracking costs a table entry and per-packet work for every flow in the
tunnel. On a busy hub that is CPU time and table space spent for nothing, and it
brings the table closer to full (conntrack.table-pressure).`,
		Cases:    []string{CaseTuning},
		Doctor:   Doctor{Role: Cause, Impact: 0.05, Side: Both, Bench: InBench, Verify: Measured},
		Remedies: []Remedy{notrack},
		Example: Example{
			Host:  "wg0 listens on UDP port 51820 and no NAT rule matches it",
			Fixes: func() []finding.Fix { return notrackFix(exampleHost, exampleWG) },
		},
	},
	{
		ID:    KernelDrops,
		Title: "The kernel dropped tunnel traffic for a reason no other finding covers",
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench", Doc: `Counts, on both ends while each bench run
carries traffic, every packet the kernel drops by its drop reason (the
skb:kfree_skb tracepoint's enum skb_drop_reason, Linux 5.17 and later), the
kernel function that dropped it and its interface (wgperf drops). A reason
another finding explains (SOCKET_RCVBUFF: udp.rcvbuf-errors, NETFILTER_DROP:
the firewall's findings, CPU_BACKLOG: net.backlog-drops, PKT_TOO_BIG and
FRAG_REASM_TIMEOUT: the MTU findings) is evidence on that finding; any other
(rp_filter, no route, a neighbour that never resolved, a qdisc overflowing, a
TCP segment out of window, a checksum error) is this finding, so no drop stays
invisible. A warning from 1,000 packets with a reason (NOT_SPECIFIED, which
kernels before 6.x give much that is freed, counts only as a note) during the
tunnel runs.`}},
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Every packet the kernel drops in the tunnel's path is a retransmission and a
congestion signal for the TCP inside: counters show that packets died, the
kernel's reason shows where and why, and names the setting to look at
(rp_filter for IP_RPFILTER, the routes for IP_OUTNOROUTES, the qdisc for
QDISC_DROP).`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.1, Side: Both, Bench: InBench, Verify: Measured},
		Example: Example{
			Host: "netns:b dropped 9,312 packets for IP_RPFILTER in ip_rcv_finish_core on eth0 while receiving the tunnel's download",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{
					Description: "Watch the drops by reason while traffic flows, and look at the setting the reason names",
					Commands:    []string{"wgperf drops --host netns:b --duration 30s"},
				}}
			},
		},
	},
}
