package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// linkEntries are the catalog's entries of one area (Catalog, catalog.go):
// Links, their queues and the UDP socket under the tunnel: bonds, NIC offloads, softirq budgets, backlogs, receive buffers.
var linkEntries = []Entry{
	{
		ID:         BondHashPolicy,
		Title:      "802.3ad bond hashes on layer 2, so every tunnel between two hosts uses one link",
		Check:      &bondHashPolicy,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `A bond adds capacity only for traffic its hash spreads over the links. One
WireGuard tunnel is one UDP flow, so it leaves by one link whatever the hash;
with layer2 hashing every tunnel and flow between the same two hosts does too,
so several tunnels on different ports (fix ecmp) or parallel flows never get
more than one link's speed, however many links the bond has. The cure,
layer3+4, hashes on ports too. It is not fully 802.3ad compliant (the kernel's
bonding documentation): fragments carry no ports and may take another link
than their flow and arrive out of order, which a tunnel whose packets fit the
path never sends.`,
		Cases: []string{CaseECMP},
		// One tunnel stays on one link under either hash, and so does the
		// bench's one stream around it: a bench cannot see the gain and would
		// roll the fix back (the ECMP case saw it with iperf3 -P 2 around the
		// tunnel, 947 Mbit/s to 1.89 Gbit/s, and then with several tunnels).
		Doctor: Doctor{Role: Cause, Impact: 0.5, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "several tunnels on different ports (fix ecmp) or parallel flows spread over the bond's links; one tunnel stays on one link under either hash"},
		Remedies: []Remedy{
			{Kind: remedy.KindBondHash, Params: map[string]Values{"bond": Named("an 802.3ad bond").On(lacpBond), "policy": OneOf("layer3+4")}},
		},
		Example: Example{
			Host:  "bond0 is an 802.3ad bond hashing on layer2",
			Fixes: func() []finding.Fix { return bondHashFix(exampleHost, "bond0") },
		},
	},
	{
		ID:    NetBacklogDrops,
		Title: "Packets dropped at a full per-CPU backlog queue",
		Check: &backlogDrops,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench",
			Doc: `Reads /proc/net/softnet_stat on both ends before and after each tunnel
run: packets the per-CPU backlogs dropped while the tunnel carried traffic are
a warning, where the check's count since boot is only a note. The counters are
the whole machine's, so both ends of a pair on one machine (the lab) see the
same drops. Fix: raise net.core.netdev_max_backlog to 5000.`}},
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `These packets are dropped before any protocol sees them: WireGuard's
datagrams lost on the receiving host, which TCP inside the tunnel reads as
congestion and backs off from.`,
		Cases:  []string{CaseTuning, CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.55, Side: Receiver, Bench: InBench, Verify: Measured, Load: "backlog drops"},
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
		ID:         NetLinkSpeed,
		Title:      "The uplink's negotiated speed is the tunnel's ceiling",
		Check:      &linkSpeed,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `No tunnel carries more than the link under it: a 1 Gbit/s port under a
2 Gbit/s plan caps the tunnel near 900 Mbit/s however it is tuned, and a port
at half duplex halves what is left. A bond's speed is its slaves' sum, but a
bond that hashes flows sends one tunnel (one UDP flow) by one slave: one
tunnel's ceiling is one slave, the sum is for several tunnels (ECMP).`,
		Cases:  []string{CaseECMP},
		Doctor: Doctor{Role: Environment, Impact: 0.3, Side: Both, Bench: InBench, Verify: Measured},
		Example: Example{
			Host: "eth0 negotiated 1000 Mbit/s under a 2 Gbit/s plan",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "See what the port and its partner can negotiate", Commands: []string{"ethtool eth0"}}}
			},
		},
	},
	{
		ID:         NetSoftirqBudget,
		Title:      "Receive processing runs out of its per-round budget",
		Check:      &softirqBudget,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Packets a round of receive processing leaves behind wait for the next one
while more arrive: the per-CPU backlog fills and drops them before WireGuard
sees them, and TCP inside the tunnel backs off. The tuning guide raises
netdev_budget first, then spreads the work over CPUs.`,
		Cases: []string{CaseTuning, CaseRemoteUsers},
		// The softnet counters are the machine's, every namespace's together:
		// the lab, whose nodes share them, reports it without judging it.
		Doctor: Doctor{Role: Environment, Impact: 0.3, Side: Receiver, Bench: InBench, Verify: Measured},
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
		ID:         NetUDPOffloads,
		Title:      "UDP offloads: GRO forwarding off for a userspace tunnel, or UDP GSO on a kernel that breaks it",
		Check:      &udpOffloads,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `A tunnel's cost is per packet: batching UDP (GSO when sending, GRO when
receiving or forwarding) lets the kernel and a userspace WireGuard handle many
packets as one. Forwarded UDP is only batched with rx-udp-gro-forwarding on,
and on a kernel release that mishandles UDP GSO the same batching loses or
garbles packets instead.`,
		Cases:  []string{CaseTuning, CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: InBench, Verify: Measured},
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
		ID:    UDPRcvbufErrors,
		Title: "UDP datagrams dropped because socket buffers were full",
		Check: &udpRcvbufErrors,
		Probes: []Source{
			{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench",
				Doc: `Reads Udp RcvbufErrors and SndbufErrors on both ends before and after
each tunnel run, and the drops of each UDP socket (/proc/net/udp): receive
errors while the tunnel carried traffic are a warning, with 25 MiB buffers as
its fix. When the sockets show the tunnel's own dropped nothing, the drops
were another socket's (a test's own) and the finding is a note with no buffer
to raise: kernel WireGuard receives through the UDP stack's hook and has no
socket queue.`},
			{Kind: "probe", Name: "wgperf doctor (the other end of a tunnel that dropped)", Package: "internal/doctor",
				Doc: `When the bench found one end dropping datagrams at a full socket
buffer, doctor reports the other end too, as a note, where that one runs
userspace WireGuard behind a receive limit (net.core.rmem_max) no larger: it
drops once the first end's fix speeds its direction up. The remote users' VPS
had the same 212 KB defaults as the end that dropped, and the fix was made on
both.`},
		},
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Each drop is a WireGuard packet lost before it is decrypted. TCP inside the
tunnel takes it for congestion and slows down, so a small socket buffer caps the
tunnel far below the link.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.6, Side: Receiver, Bench: InBench, Verify: Measured, Load: "UDP buffer drops"},
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
