package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// linkEntries add to internal/catalog/link.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// Links, their queues and the UDP socket under the tunnel: bonds, NIC offloads, softirq budgets, backlogs, receive buffers.
var linkEntries = []Entry{
	{
		ID:    catalog.BondHashPolicy,
		Check: &bondHashPolicy,
		Remedies: []Remedy{
			{Kind: remedy.KindBondHash, Params: map[string]Values{"bond": Named("an 802.3ad bond").On(lacpBond), "policy": OneOf("layer3+4")}},
		},
		Example: Example{
			Host:  "bond0 is an 802.3ad bond hashing on layer2",
			Fixes: func() []finding.Fix { return bondHashFix(exampleHost, "bond0") },
		},
	},
	{
		ID:    catalog.NetBacklogDrops,
		Check: &backlogDrops,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)",
			Doc: `Reads /proc/net/softnet_stat on both ends before and after each tunnel
run: packets the per-CPU backlogs dropped while the tunnel carried traffic are
a warning, where the check's count since boot is only a note. The counters are
the whole machine's, so both ends of a pair on one machine (the lab) see the
same drops. Fix: raise net.core.netdev_max_backlog to 5000.`}},
		Remedies: []Remedy{
			// the backlog raised, or dev_weight restored where it was lowered (backlogSysctl)
			{Kind: remedy.KindSysctl, Params: map[string]Values{"key": OneOf("net.core.netdev_max_backlog", "net.core.dev_weight"),
				"value": Either(backlogValues, OneOf(itoa(devWeightDefault))).On(backlogSysctl)}},
		},
		Example: Example{
			Host: "net.core.netdev_max_backlog is 1000, the default",
			Fixes: func() []finding.Fix {
				return sysctlFix(fmt.Sprintf("Raise net.core.netdev_max_backlog to %d", BacklogTarget), "net.core.netdev_max_backlog", itoa(BacklogTarget))
			},
		},
	},
	{
		ID:    catalog.NetLinkSpeed,
		Check: &linkSpeed,
		Example: Example{
			Host: "eth0 negotiated 1000 Mbit/s under a 2 Gbit/s plan",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "See what the port and its partner can negotiate", Commands: []string{"ethtool eth0"}}}
			},
		},
	},
	{
		ID:    catalog.NetSoftirqBudget,
		Check: &softirqBudget,
		Remedies: []Remedy{
			{Kind: remedy.KindSysctl, Params: map[string]Values{
				"key":   OneOf("net.core.netdev_budget", "net.core.netdev_budget_usecs").On(proposedBy(&softirqBudget, remedy.KindSysctl)),
				"value": Between(budgetTarget, maxInt),
			}},
			{Kind: remedy.KindRPS, Params: map[string]Values{"device": Named("an uplink").On(proposedBy(&softirqBudget, remedy.KindRPS)),
				"mask": Named("the mask of every CPU").On(allCPUs)}},
		},
		Example: Example{
			Host: "net.core.netdev_budget is 300 and netdev_budget_usecs 2000 (the defaults), and time_squeeze grows under tunnel load",
			Fixes: func() []finding.Fix {
				return append(sysctlFix("Raise net.core.netdev_budget from 300 to 600", "net.core.netdev_budget", "600"),
					sysctlFix("Raise net.core.netdev_budget_usecs from 2000 to 4000", "net.core.netdev_budget_usecs", "4000")...)
			},
		},
	},
	{
		ID:    catalog.NetUDPOffloads,
		Check: &udpOffloads,
		Remedies: []Remedy{
			{Kind: remedy.KindOffload, Params: map[string]Values{
				"device": Named("the uplink"),
				"features": OneOf("rx-udp-gro-forwarding=on", "rx-udp-gro-forwarding=on,rx-gro-list=off", "tx-udp-segmentation=off").
					On(proposedBy(&udpOffloads, remedy.KindOffload)),
			}},
		},
		Example: Example{
			Host: "a gateway forwarding into wireguard-go, whose uplink eth0 has rx-udp-gro-forwarding off",
			Fixes: func() []finding.Fix {
				r, err := remedy.Offload("eth0", []remedy.Feature{{Name: "rx-udp-gro-forwarding", On: true}, {Name: "rx-gro-list"}})
				return fixes("Turn UDP GRO forwarding on for eth0 (rx-gro-list off)", r, err)
			},
		},
	},
	{
		ID:    catalog.UDPRcvbufErrors,
		Check: &udpRcvbufErrors,
		Probes: []Source{
			{Kind: "probe", Name: "wgperf bench (and doctor, lab run)",
				Doc: `Reads Udp RcvbufErrors and SndbufErrors on both ends before and after
each tunnel run, and the drops of each UDP socket (/proc/net/udp): receive
errors while the tunnel carried traffic are a warning, with 25 MiB buffers as
its fix. When the sockets show the tunnel's own dropped nothing, the drops
were another socket's (a test's own) and the finding is a note with no buffer
to raise: kernel WireGuard receives through the UDP stack's hook and has no
socket queue.`},
			{Kind: "probe", Name: "wgperf doctor (the other end of a tunnel that dropped)",
				Doc: `When the bench found one end dropping datagrams at a full socket
buffer, doctor reports the other end too, as a note, where that one runs
userspace WireGuard behind a receive limit (net.core.rmem_max) no larger: it
drops once the first end's fix speeds its direction up. The remote users' VPS
had the same 212 KB defaults as the end that dropped, and the fix was made on
both.`},
		},
		Remedies: []Remedy{
			{Kind: remedy.KindSysctl, Params: map[string]Values{
				"key":   OneOf("net.core.rmem_max", "net.core.rmem_default", "net.core.wmem_max", "net.core.wmem_default"),
				"value": OneOf(itoa(udpBufferTarget)).On(raises),
			}},
		},
		Example: Example{
			Host: "net.core.rmem_max and rmem_default are 212992 (208 KiB)",
			Fixes: func() []finding.Fix {
				var out []finding.Fix
				for _, k := range []string{"net.core.rmem_max", "net.core.rmem_default"} {
					out = append(out, sysctlFix(fmt.Sprintf("Raise %s from %s to %s", k, mib(212992), mib(udpBufferTarget)), k, itoa(udpBufferTarget))...)
				}
				return out
			},
		},
	},
}
