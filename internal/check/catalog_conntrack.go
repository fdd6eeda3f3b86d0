package check

import (
	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// conntrackEntries add to internal/catalog/conntrack.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// Connection tracking and the kernel's own drop reasons.
var conntrackEntries = []Entry{
	{
		ID:    catalog.ConntrackInvalidDrops,
		Check: &conntrackInvalidDrops,
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
		ID:    catalog.ConntrackTablePressure,
		Check: &conntrackTablePressure,
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
		ID:       catalog.ConntrackTunnelTracked,
		Check:    &conntrackTunnelTracked,
		Remedies: []Remedy{notrack},
		Example: Example{
			Host:  "wg0 listens on UDP port 51820 and no NAT rule matches it",
			Fixes: func() []finding.Fix { return notrackFix(exampleHost, exampleWG) },
		},
	},
	{
		ID: catalog.KernelDrops,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Doc: `Counts, on both ends while each bench run
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
