package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	BondHashPolicy   ID = "bond.hash-policy"
	NetBacklogDrops  ID = "net.backlog-drops"
	NetLinkSpeed     ID = "net.link-speed"
	NetSoftirqBudget ID = "net.softirq-budget"
	NetUDPOffloads   ID = "net.udp-offloads"
	UDPRcvbufErrors  ID = "udp.rcvbuf-errors"
)

// linkEntries are the catalog's entries of one area (Entries, catalog.go):
// Links, their queues and the UDP socket under the tunnel: bonds, NIC offloads, softirq budgets, backlogs, receive buffers.
var linkEntries = []Entry{
	{
		ID:         BondHashPolicy,
		Title:      "802.3ad bond hashes on layer 2, so every tunnel between two hosts uses one link",
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
		// bench's one stream around it: the bench cannot see the gain. The
		// fix is measured as the ECMP case saw it, with parallel flows around
		// the tunnel (iperf3 -P 2: 947 Mbit/s to 1.89 Gbit/s), before and after.
		Doctor: Doctor{Role: Cause, Impact: 0.5, Side: Both, Bench: NotInBench, Verify: Spread,
			Gain: "several tunnels on different ports (fix ecmp) or parallel flows spread over the bond's links; one tunnel stays on one link under either hash"},
	},
	{
		ID:         NetBacklogDrops,
		Title:      "Packets dropped at a full per-CPU backlog queue",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `These packets are dropped before any protocol sees them: WireGuard's
datagrams lost on the receiving host, which TCP inside the tunnel reads as
congestion and backs off from.`,
		Cases:  []string{CaseTuning, CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.55, Side: Receiver, Bench: InBench, Verify: Measured, Load: "backlog drops"},
	},
	{
		ID:         NetLinkSpeed,
		Title:      "The uplink's negotiated speed is the tunnel's ceiling",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `No tunnel carries more than the link under it: a 1 Gbit/s port under a
2 Gbit/s plan caps the tunnel near 900 Mbit/s however it is tuned, and a port
at half duplex halves what is left. A bond's speed is its slaves' sum, but a
bond that hashes flows sends one tunnel (one UDP flow) by one slave: one
tunnel's ceiling is one slave, the sum is for several tunnels (ECMP).`,
		Cases:  []string{CaseECMP},
		Doctor: Doctor{Role: Environment, Impact: 0.3, Side: Both, Bench: InBench, Verify: Measured},
	},
	{
		ID:         NetSoftirqBudget,
		Title:      "Receive processing runs out of its per-round budget",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Packets a round of receive processing leaves behind wait for the next one
while more arrive: the per-CPU backlog fills and drops them before WireGuard
sees them, and TCP inside the tunnel backs off. The tuning guide raises
netdev_budget first, then spreads the work over CPUs.`,
		Cases: []string{CaseTuning, CaseRemoteUsers},
		// The softnet counters are the machine's, every namespace's together:
		// the lab, whose nodes share them, reports it without judging it.
		Doctor: Doctor{Role: Environment, Impact: 0.3, Side: Receiver, Bench: InBench, Verify: Measured},
	},
	{
		ID:         NetUDPOffloads,
		Title:      "UDP offloads: GRO forwarding off for a userspace tunnel, or UDP GSO on a kernel that breaks it",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `A tunnel's cost is per packet: batching UDP (GSO when sending, GRO when
receiving or forwarding) lets the kernel and a userspace WireGuard handle many
packets as one. Forwarded UDP is only batched with rx-udp-gro-forwarding on,
and on a kernel release that mishandles UDP GSO the same batching loses or
garbles packets instead.`,
		Cases:  []string{CaseTuning, CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: InBench, Verify: Measured},
	},
	{
		ID:         UDPRcvbufErrors,
		Title:      "UDP datagrams dropped because socket buffers were full",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Each drop is a WireGuard packet lost before it is decrypted. TCP inside the
tunnel takes it for congestion and slows down, so a small socket buffer caps the
tunnel far below the link.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.6, Side: Receiver, Bench: InBench, Verify: Measured, Load: "UDP buffer drops"},
	},
}
