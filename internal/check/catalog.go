package check

import (
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Finding IDs, one per catalog entry. IDs are stable: JSON consumers,
// alerts, docs and "wgperf fix --only" rely on them.
const (
	BondHashPolicy         finding.ID = "bond.hash-policy"
	ConntrackInvalidDrops  finding.ID = "conntrack.invalid-drops"
	ConntrackTablePressure finding.ID = "conntrack.table-pressure"
	ConntrackTunnelTracked finding.ID = "conntrack.tunnel-tracked"
	CPUIRQImbalance        finding.ID = "cpu.irq-imbalance"
	CPUQuotaThrottled      finding.ID = "cpu.quota-throttled"
	CPUSaturated           finding.ID = "cpu.saturated"
	CPUSoftirqImbalance    finding.ID = "cpu.softirq-imbalance"
	CPUSteal               finding.ID = "cpu.steal"
	ICMPFragNeededDropped  finding.ID = "icmp.frag-needed-dropped"
	ICMPRatelimitDrops     finding.ID = "icmp.ratelimit-drops"
	KernelDrops            finding.ID = "kernel.drops"
	LatencyBufferbloat     finding.ID = "latency.bufferbloat"
	MTUMSSClampIPv6        finding.ID = "mtu.mss-clamp-ipv6"
	MTUMSSClampMissing     finding.ID = "mtu.mss-clamp-missing"
	MTUPMTUDBlackhole      finding.ID = "mtu.pmtud-blackhole"
	MTUTunnelTooLarge      finding.ID = "mtu.tunnel-too-large"
	MTUTunnelTooSmall      finding.ID = "mtu.tunnel-too-small"
	NetBacklogDrops        finding.ID = "net.backlog-drops"
	NetLinkSpeed           finding.ID = "net.link-speed"
	NetSoftirqBudget       finding.ID = "net.softirq-budget"
	NetUDPOffloads         finding.ID = "net.udp-offloads"
	PathHubLeg             finding.ID = "path.hub-leg"
	PathPortThrottled      finding.ID = "path.port-throttled"
	PathUDPPoliced         finding.ID = "path.udp-policed"
	RouteECMPSuggested     finding.ID = "route.ecmp-suggested"
	RouteEndpointUplink    finding.ID = "route.endpoint-uplink"
	RouteStaleEndpoint     finding.ID = "route.stale-endpoint"
	RouteUplinkFlaps       finding.ID = "route.uplink-flaps"
	TCPBuffersSmall        finding.ID = "tcp.buffers-small"
	TCPCongestionControl   finding.ID = "tcp.congestion-control"
	ThroughputAsymmetric   finding.ID = "throughput.asymmetric"
	ThroughputCollapseKnee finding.ID = "throughput.collapse-knee"
	ThroughputOscillation  finding.ID = "throughput.oscillation"
	ThroughputShaperCap    finding.ID = "throughput.shaper-cap"
	ThroughputTunnelRatio  finding.ID = "throughput.tunnel-ratio"
	UDPRcvbufErrors        finding.ID = "udp.rcvbuf-errors"
	WGAllowedIPsMismatch   finding.ID = "wg.allowedips-mismatch"
	WGSpecificCollapse     finding.ID = "wg.specific-collapse"
	WGHandshakeStale       finding.ID = "wg.handshake-stale"
	WGNATNoKeepalive       finding.ID = "wg.nat-no-keepalive"
	WGSharedKey            finding.ID = "wg.shared-key"
	WGUserspace            finding.ID = "wg.userspace"
)

// The real investigations the catalog comes from, named by what happened (the
// README's case list uses the same words; the lab's scenarios reproduce them).
const (
	CaseMultiWAN    = "multi-WAN router: endpoint route stuck on the backup uplink"
	CasePMTUD       = "PMTUD black hole between two sites with ICMP blocked"
	CaseTuning      = "tunnel below 90% of its link (tuning guide)"
	CaseECMP        = "more than one link's worth: ECMP over several tunnels and a bond"
	CaseRemoteUsers = "remote users at 5 Mbit/s over a 400 Mbit/s path"
)

// Cases lists the case names, in the README's order.
var Cases = []string{CaseMultiWAN, CasePMTUD, CaseTuning, CaseECMP, CaseRemoteUsers}

// costsThroughFailures is the gain of a cause no steady-rate figure shows.
const costsThroughFailures = "not visible in the bench: it costs through failovers or failed connections, not the steady rate"

// Values of remedy params the catalog names more than once.
var (
	wgInterface     = Named("the WireGuard interface").On(onWireGuard)
	uciSectionParam = Named("its OpenWrt network section").On(tunnelUCISection).Optional()
	wgMTU           = Remedy{Kind: remedy.KindWGMTU, Params: map[string]Values{"interface": wgInterface, "mtu": Between(1280, 9000).On(lowersMTU), "uci_section": uciSectionParam}}
	notrack         = Remedy{Kind: remedy.KindNoTrack, Params: map[string]Values{
		"interface": Named("the WireGuard interface, which no NAT rule matches").On(untrackable), "port": Between(1, 65535).On(listenPort)}}
)

// maxInt is the largest value the kernel takes for an int sysctl.
const maxInt = 1<<31 - 1

// exampleHost is the host the example fixes are written for: a Linux host
// (not OpenWrt), whose remedies are the plain ones.
var exampleHost = &facts.Snapshot{}

const (
	exampleEndpoint = "203.0.113.2"
	exampleGateway  = "192.0.2.1"
)

var exampleWG = facts.WGInterface{Name: "wg0", ListenPort: 51820}

// exampleFarKey is the far end's public key in the examples.
const exampleFarKey = "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA="

// Catalog is every finding ID wgperf reports, sorted by ID. A new finding is
// its check (or the probe that reports it) and its entry here.
var Catalog = []Entry{
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
		ID:         CPUIRQImbalance,
		Title:      "The uplink's interrupts pile onto one CPU",
		Check:      &irqImbalance,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Every interrupt of the NIC starts receive processing on the CPU that took
it. With all of the uplink's queues interrupting one CPU, that CPU carries the
tunnel's receive work alone: it saturates, its backlog overflows, packets
arrive out of order and TCP backs off while the other CPUs idle.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.45, Side: Receiver, Bench: InBench, Verify: Measured},
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
		ID:    CPUQuotaThrottled,
		Title: "A CPU quota throttles the tunnel's process: its cgroup runs out of CPU time while no CPU looks busy",
		Check: &cpuQuota,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Package: "internal/check", Doc: `Reads the quota's cpu.stat again after its bench: the
periods the cgroup ran out of its quota during the bench, judged as the check
judges them since the cgroup was made.`}},
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
		ID:    CPUSaturated,
		Title: "A CPU is the ceiling: above 90% busy while the tunnel carries traffic",
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench", Doc: `Samples /proc/stat on both ends while the tunnel
carries a bench run. A CPU above 90% busy during a tunnel run is the ceiling:
encryption and packet processing for a userspace or single-queue tunnel pile
onto one core, so the tunnel cannot go faster however the network is tuned.
The tuning guide's first question. Fix: spread the load (RPS, IRQ affinity),
or accept the ceiling; in a lab that shares one machine, it describes the
machine rather than the tunnel.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `When a CPU is the ceiling, no network tuning makes the tunnel faster: the
other findings' gains are capped by it. The way out is spreading the work or a
faster WireGuard implementation.`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Environment, Impact: 0.5, Side: Both, Bench: InBench, Verify: Measured, Load: "a CPU near its limit"},
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
		ID:         CPUSoftirqImbalance,
		Title:      "Packet processing piles onto one CPU",
		Check:      &softirqImbalance,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Receive processing for the whole tunnel runs on one CPU. When that CPU
saturates, its backlog overflows, packets are dropped and TCP backs off, so
throughput oscillates while the other CPUs idle.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.45, Side: Receiver, Bench: InBench, Verify: Measured, Load: "receive processing on one CPU"},
		Remedies: []Remedy{
			{Kind: remedy.KindRPS, Params: map[string]Values{"device": Named("an uplink").On(anUplink), "mask": Named("the mask of every CPU").On(allCPUs)}},
		},
		Example: Example{
			Host:  "a 4-CPU host whose uplink eth0 has no RPS mask",
			Fixes: func() []finding.Fix { return rpsFix(exampleHost, "eth0", cpuMask(4)) },
		},
	},
	{
		ID:    CPUSteal,
		Title: "The hypervisor steals CPU time: the tunnel waits for CPUs this machine never sees busy",
		Check: &cpuSteal,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Package: "internal/check", Doc: `Reads /proc/stat again after its bench: the share of CPU
time stolen during the bench, judged as the check judges it since boot.`}},
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
		Example: Example{
			Host: "a VPS whose CPUs were stolen 31% of the time during the bench",
			Fixes: func() []finding.Fix {
				f, _ := CPUStealFinding(hostName(exampleHost), nil, []facts.CPUTimes{{CPU: "cpu", User: 4000, Idle: 2900, Steal: 3100}}, "")
				return f.Fixes
			},
		},
	},
	{
		ID:         ICMPFragNeededDropped,
		Title:      "A firewall rule drops the ICMP errors path MTU discovery needs",
		Check:      &icmpFragNeededDropped,
		Severities: []finding.Severity{finding.Warning},
		Why: `Path MTU discovery is how a sender learns that its packets are too big for
a hop: the hop drops them and answers "fragmentation needed" (ICMPv6 "packet too
big"). Drop that answer and large packets vanish without a word: bulk TCP
stalls while ssh and pings work. Lowering the MTU or clamping the MSS works
around it for the traffic they cover; letting these errors through cures it
for every sender.`,
		Cases: []string{CasePMTUD},
		Doctor: Doctor{Role: Cause, Impact: 0.7, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "senders learn the path MTU again: large packets through narrower hops (the tunnel's, for hosts behind it) " +
				"stop vanishing (a bench between the tunnel's ends may not show it: their own packets may fit)",
			Underlies: []finding.ID{MTUPMTUDBlackhole, MTUMSSClampMissing}},
		Remedies: []Remedy{
			{Kind: remedy.KindPMTUDAllow, Params: map[string]Values{
				"icmp": OneOf(remedy.FragNeeded, remedy.PacketTooBig, remedy.FragNeeded+","+remedy.PacketTooBig).
					On(proposedBy(&icmpFragNeededDropped, remedy.KindPMTUDAllow)),
				"family": OneOf("ip", "ip6", "inet"), "table": Named("the dropping rule's table"), "chain": Named("its chain"),
				// an nft rule by handle, or an iptables rule by its text
				"handle": Between(1, maxInt).Optional(), "backend": OneOf("iptables").Optional(),
				"rule": Named("the iptables rule that drops them").Optional(),
			}},
		},
		Example: Example{
			Host: `the nft rule "icmp type destination-unreachable drop" (handle 7 in inet filter output) drops the "fragmentation needed" a gateway sends its LAN hosts`,
			Fixes: func() []finding.Fix {
				return ptbAllowFixes(facts.FirewallRule{Backend: "nft", Family: "inet", Table: "filter", Chain: "output", Handle: 7,
					Text: "icmp type destination-unreachable drop"}, []string{remedy.FragNeeded})
			},
		},
	},
	{
		ID:    ICMPRatelimitDrops,
		Title: "An ICMP rate-limit rule has dropped packets on an uplink",
		Check: &icmpRateLimitDrops,
		Probes: []Source{{Kind: "probe", Name: "wgperf icmp-burst (and doctor, where health checks ping)", Package: "internal/probe/icmpburst",
			Doc: `Pings the health checks' targets as their checkers do, each ping its own
process (20 per target), then with one persistent ping of as many packets, and
reads the firewall's counters before and after. One-shot pings that fail at
twice the persistent ping's rate plus 5 points or more mean a limiter drops
reply bursts, and the counter that grew names its rule: the health checks'
replies are what the limit eats, which the check can only suspect.`}},
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Health checks (mwan3, keepalived, monitoring) send short bursts of pings. A
limiter that drops their replies makes a good uplink look dead, so failover
moves the traffic, and the tunnel's endpoint route with it, onto the slow
backup.`,
		Cases:  []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Gain: costsThroughFailures, Verify: ConfirmOnly},
		Remedies: []Remedy{
			{Kind: remedy.KindICMPLimit, Params: map[string]Values{
				"rate": OneOf(itoa(icmpLimitRaised)),
				// banIP's uci option, an nft rule by handle, or an iptables rule by its text
				"banip": OneOf("1").On(banIPLimit).Optional(), "backend": OneOf("iptables").Optional(),
				"family": Named("a firewall family").Optional(), "table": Named("a firewall table").Optional(),
				"chain": Named("a firewall chain").Optional(), "handle": Between(1, maxInt).On(limitRule).Optional(),
				"meter": Named("the nft meter the rule declares").Optional(),
				"rule":  Named("the iptables rule with the limit").On(limitRule).Optional(),
			}},
		},
		Example: Example{
			Host: `the nft rule "icmp type echo-reply limit rate 25/second burst 5 packets accept" (handle 42 in inet fw4 input_wan) lets the excess fall through to a drop; or banIP's ICMP limit on OpenWrt`,
			Fixes: func() []finding.Fix {
				rule := facts.FirewallRule{Backend: "nft", Family: "inet", Table: "fw4", Chain: "input_wan", Handle: 42,
					Text: "icmp type echo-reply limit rate 25/second burst 5 packets accept"}
				out := raiseFixes(exampleHost, rule)
				rem, err := remedy.BanIPLimit(icmpLimitRaised)
				return append(out, fixes(fmt.Sprintf("Raise banIP's ICMP limit to %d/second", icmpLimitRaised), rem, err)...)
			},
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
	{
		ID:    LatencyBufferbloat,
		Title: "Latency under load: a transfer fills a deep queue and every packet waits behind it",
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench", Doc: `Pings the far end's tunnel and underlay addresses
from the client, five a second, for two seconds before any run and all
through every run's measured seconds. When the single-stream run in a
direction adds more than 30 ms to the tunnel's median round trip, the queue
that grew is located by the underlay's pings of the same moment: as delayed
(half as much or more), it is on the path (a bottleneck's deep buffer); near
idle, it is at the tunnel's ends. 30 ms is where the common bufferbloat
grades leave A for B. Fix: cake (or htb with fq_codel) shaping the sender's
uplink, or its WireGuard interface, at 90% of the measured rate.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `The throughput looks fine, but while a transfer runs every interactive
packet (a keystroke over ssh, a call, a DNS lookup) waits behind the queue the
transfer keeps full: hundreds of milliseconds on a home uplink's FIFO. It is
the commonest "the VPN is slow" that a speed test cannot see. A queue
discipline that shapes just below the bottleneck keeps that queue where an
AQM holds it to a few milliseconds (flent's RRUL test and OpenWrt's SQM exist
for it).`,
		Cases: []string{CaseTuning},
		// Impact: it costs no rate, so below every other hidden cause (0.3 and
		// up: a health check's lost pings fail a router over) and above any
		// latent one (a fifth of its impact), where the rate is fine.
		Doctor: Doctor{Role: Cause, Impact: 0.25, Side: Sender, Bench: NotInBench, Verify: ConfirmOnly, CostsLatency: true,
			Gain: "interactive traffic keeps about its idle round trip while a transfer runs (the rate drops by the shaper's 10%)"},
		Remedies: []Remedy{
			{Kind: remedy.KindSQM, Params: map[string]Values{"device": Named("the sender's uplink or WireGuard interface").On(sqmDevice), "bandwidth": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "an upload through wg0 adds 180 ms to the round trip, and pings outside the tunnel wait as long: eth0's modem holds the queue",
			Fixes: func() []finding.Fix {
				r, err := remedy.SQM("eth0", "18mbit")
				return fixes("Shape eth0's egress at 18 Mbit/s (90% of the 20.4 Mbit/s measured) with cake, or htb + fq_codel where the kernel has no cake", r, err)
			},
		},
	},
	{
		ID:         MTUMSSClampIPv6,
		Title:      "A fixed MSS clamp is too large for IPv6 inside the tunnel",
		Check:      &mssClampIPv6,
		Severities: []finding.Severity{finding.Warning},
		Why: `IPv6 headers take 20 bytes more than IPv4's, so the MSS that fits a tunnel is
its MTU - 40 for IPv4 but MTU - 60 for IPv6. A clamp fixed at the IPv4 value
lets full-size IPv6 segments through that the tunnel cannot carry, and IPv6 is
never fragmented on the way: IPv6 transfers stall wherever "packet too big"
does not get back, while IPv4 works and hides the fault.`,
		Cases: []string{CasePMTUD, CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.7, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "IPv6 hosts behind the gateways get bulk TCP through the tunnel again (a bench over IPv4 cannot show it)"},
		Remedies: []Remedy{
			{Kind: remedy.KindMSSClamp, Params: map[string]Values{
				"oif": Named("the WireGuard interface").On(proposedBy(&mssClampIPv6, remedy.KindMSSClamp)), "mss": OneOf("pmtu")}},
		},
		Example: Example{
			Host: `wg0 (MTU 1420) carries IPv6, and "oifname wg0 tcp flags syn / syn,rst tcp option maxseg size set 1380" clamps it: right for IPv4, 20 bytes too much for IPv6`,
			Fixes: func() []finding.Fix {
				rem, err := remedy.MSSClamp("wg0", 0, platform(exampleHost))
				return fixes("Clamp the MSS of TCP into wg0 to the route MTU as well: IPv4 keeps 1380, IPv6 gets 1360", rem, err)
			},
		},
	},
	{
		ID:         MTUMSSClampMissing,
		Title:      "Forwarded TCP enters a smaller-MTU tunnel without MSS clamping",
		Check:      &mssClampMissing,
		Severities: []finding.Severity{finding.Warning},
		Why: `Hosts behind the gateway choose their TCP segment size from their own LAN
MTU. Without a clamp their full-size segments do not fit the tunnel, and they
depend on ICMP "fragmentation needed" getting back to them: where it is
blocked, transfers stall right after the handshake.`,
		Cases: []string{CasePMTUD, CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.7, Side: Both, Bench: NotInBench, Verify: ConfirmOnly, Calls: ProbeMTU,
			Gain: "hosts behind the gateways get bulk TCP through the tunnel again " +
				"(the gateways' own bench cannot show it: their connections already fit the tunnel's MTU)"},
		Remedies: []Remedy{
			{Kind: remedy.KindMSSClamp, Params: map[string]Values{"oif": Named("the WireGuard interface a LAN forwards into").On(forwardsInto), "mss": OneOf("pmtu")}},
		},
		Example: Example{
			Host:  "the host forwards its LAN (MTU 1500) into wg0 (MTU 1420)",
			Fixes: func() []finding.Fix { return mssClampFix(exampleHost, "wg0") },
		},
	},
	{
		ID:    MTUPMTUDBlackhole,
		Title: "PMTUD black hole: large packets vanish and no ICMP says why",
		Probes: []Source{{Kind: "probe", Name: "wgperf mtu (and doctor, lab run)", Package: "internal/probe/mtu", Doc: `Sends don't-fragment probes towards the peer's endpoint
(ping -M do, or BusyBox traceroute -F on a router) at likely path MTUs, then
bisects; large probes that vanish without an ICMP "fragmentation needed" mean
a PMTUD black hole. Through the tunnel, TCP MSS stepping proves the cliff:
one MSS runs, one byte more collapses (WireGuard pads its packets to 16
bytes, so the cliff falls where the padded packet outgrows the path). When
doctor's bench saw the underlay's own TCP collapse too, MSS steps to the
endpoint outside the tunnel prove the hosts' own traffic stalls at the same
hop. The case: between two sites with ICMP
blocked, one direction ran at full speed and the other at 30 KB/s. Fix: a
WireGuard MTU that fits the path (path MTU - 60 for IPv4, - 80 for IPv6) on
both ends, and an MSS clamp where the gateways forward LAN traffic. On kernel
WireGuard, whose outer packets carry no DF, a black hole that MSS stepping
shows the tunnel passing (fragmented at the narrow hop) is info: it stalls PMTUD
traffic outside the tunnel, and the tunnel pays for fragmenting. Where bulk TCP
stalled (through the tunnel or outside it) it is never a note. After those fixes
come, as options wgperf fix leaves alone (it applies the first), what the case did
beside its MSS clamp on the uplink towards the black hole: its MTU lowered to the path's
(ip link set dev PHY mtu 1400, by hand: every packet on that link pays) and its
segmentation and receive offloads off (ethtool -K PHY tso off gso off gro off,
which costs CPU: every packet is built and taken apart at wire size).`}},
		Severities: []finding.Severity{finding.Info, finding.Critical},
		Why: `Small packets (ssh, pings, TCP handshakes) pass, so the tunnel looks up, but
every full-size packet vanishes: bulk transfers stall or crawl, often in one
direction only, and nothing reports an error.`,
		Cases:  []string{CasePMTUD},
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: InBench, Verify: Measured, Calls: ProbeMTU},
		Remedies: []Remedy{
			// the probe does not know the host's platform: its fix names no uci section
			{Kind: remedy.KindWGMTU, Params: map[string]Values{"interface": wgInterface, "mtu": wgMTU.Params["mtu"]}},
			{Kind: remedy.KindMSSClamp, Params: map[string]Values{"oif": wgInterface, "mss": Either(OneOf("pmtu"), Between(536, 9000)).On(fitsMSS)}},
			// the hosts' own TCP outside the tunnel, when it stalls at the same hop
			{Kind: remedy.KindSysctl, Params: map[string]Values{"key": OneOf("net.ipv4.tcp_mtu_probing"), "value": OneOf("1")}},
			// the case's own workaround, an alternative after the fixes above
			{Kind: remedy.KindOffload, Params: map[string]Values{"device": Named("the uplink towards the black hole").On(anUplink),
				"features": OneOf("tcp-segmentation-offload=off,generic-segmentation-offload=off,generic-receive-offload=off")}},
		},
		Example: Example{
			Host: "the path to the peer carries 1400-byte packets and drops larger ones without a word",
			Fixes: func() []finding.Fix {
				return append(wgMTUFix(exampleHost, "wg0", 1340, "Set the WireGuard MTU to 1340 on both ends"), mssClampFix(exampleHost, "wg0")...)
			},
		},
	},
	{
		ID:    MTUTunnelTooLarge,
		Title: "WireGuard MTU larger than the underlay allows",
		Check: &tunnelTooLarge,
		Cross: &crossMTU,
		Probes: []Source{{Kind: "probe", Name: "wgperf mtu (and doctor)", Package: "internal/probe/mtu", Doc: `When the DF probes find the path MTU (the
narrow hop answers with "fragmentation needed") and TCP through the tunnel still
collapses above an MSS, the tunnel's packets do not fit a hop its ends cannot see:
refused with DF set (userspace WireGuard), or fragmented and the fragments lost
(kernel WireGuard, on a path that drops fragments).`}},
		Severities: []finding.Severity{finding.Info, finding.Warning, finding.Critical},
		Why: `Every full-size packet the tunnel sends is too big for the link under it, so
it is fragmented (two packets for one, and losing either loses both) or
dropped; throughput falls to a fraction of the link.`,
		Cases:    []string{CaseTuning},
		Doctor:   Doctor{Role: Cause, Impact: 0.8, Side: Both, Bench: InBench, Verify: Measured, Calls: ProbeMTU},
		Remedies: []Remedy{wgMTU},
		Example: Example{
			Host: "wg0 has MTU 1500 and its IPv4 endpoint is reached over eth0 (MTU 1500): 1500 - 60 = 1440 fits",
			Fixes: func() []finding.Fix {
				return wgMTUFix(exampleHost, "wg0", 1440, "Lower wg0's MTU to 1440 (on both ends of the tunnel)")
			},
		},
	},
	{
		ID:         MTUTunnelTooSmall,
		Title:      "WireGuard MTU far below what the underlay allows",
		Check:      &tunnelTooSmall,
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Every tunnel packet pays the same headers and the same per-packet work
(encryption, interrupts, a trip through a userspace process), so a tunnel MTU
far below what fits sends more packets for the same data: "1280 to be safe"
on a 1500-byte path costs about a tenth of a packet-rate-bound tunnel's
throughput, for no benefit.`,
		Cases:  []string{CaseRemoteUsers, CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.1, Side: Both, Bench: InBench, Verify: Measured, Calls: ProbeMTU},
		Remedies: []Remedy{
			{Kind: remedy.KindWGMTU, Params: map[string]Values{"interface": wgInterface, "mtu": Between(1280, 9000).On(proposedBy(&tunnelTooSmall, remedy.KindWGMTU)),
				"uci_section": uciSectionParam}},
		},
		Example: Example{
			Host: "wg0 has MTU 1280 and its IPv4 endpoint is reached over eth0 (MTU 1500): 1500 - 60 = 1440 fits",
			Fixes: func() []finding.Fix {
				return wgMTUFix(exampleHost, "wg0", 1440, "Raise wg0's MTU to 1440 (on both ends of the tunnel)")
			},
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
		ID:    PathHubLeg,
		Title: "A tunnel through a hub is as slow as its slowest leg, and a leg past the hub is far slower than the client's own",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor --via", Package: "internal/doctor", Doc: `With the hubs given (--via), doctor measures each leg's own underlay
(client → hub, hub → server), single stream both ways. When a leg past the
first carries under 80% of the client's own leg in a direction, that leg is
the path's limit: the tunnel, judged against it, may be healthy while it runs
far below the client's link. Warning, on the host that starts the leg (the
hub); the fixes are the leg's owner's: its link, or a direct peer between the
two ends that leaves the hub out.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `A road-warrior hub or a site that forwards between spokes is a second
underlay: every packet crosses both legs, so the hub's uplink towards the far
spoke caps the tunnel whatever either spoke's own link can do. No setting on
the spokes helps; the leg's link, or a path that leaves the hub out, does.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.8, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "the tunnel runs at the client's own leg's rate once the slow leg carries as much (or is left out)"},
		Example: Example{
			Host: "hop 2 (the hub → the server) carries 9.5 Mbit/s where hop 1 (the client → the hub) carries 38.3; the tunnel carries 9.2",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "Raise the slow leg's link (between the hub and the server), or peer the two ends directly",
					Commands: []string{"iperf3 -s   # on the server", "iperf3 -c 203.0.113.2 -t 30   # on the hub"}}}
			},
		},
	},
	{
		ID:    PathPortThrottled,
		Title: "The path throttles WireGuard's UDP port: other UDP carries the rate, datagrams with its port number do not",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (UDP outside the tunnel)", Package: "internal/probe/udppath", Doc: `With the UDP run on a port of its own, doctor offers
the same rate carrying the far end's WireGuard listen port: the near end's
iperf3 sends from that port number (--cport) to the far end's iperf3, and
the download run comes back to it. WireGuard holds the port on the far end,
and taking the interface down to free it would cut the tunnel being judged,
so the run carries the number where a carrier's port rule ("udp port 51820")
meets it in either field. Where both ends listen on one port, WireGuard
holds it on both: the datagrams are sent to the far end's WireGuard port
instead, from a port of their own, without taking the tunnel down: a
temporary nft table on each end rewrites them to the port on the way out and
back to iperf3's on arrival, before WireGuard's socket sees them, counts what
arrived with the port, and is removed after the run; the near end's datagrams
then leave from the port too, so its half also says to move its own listen
port, by hand. Above 10% lost on the
path with WireGuard's port number while the other port lost under 5%: the
path throttles the port; above 50%, critical. The field's advice,
"try another port", tested instead of guessed. The finding is reported on
both ends, each with its half of the fix: a new listen port on the far end,
the peer's endpoint moved to it on the near end. Either half alone cuts the
tunnel, so doctor --fix applies them as one: the far end's first, then the
near end's, verified through the tunnel, and the far end's is rolled back
unless the near end's is kept.`}},
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A carrier or firewall that recognises WireGuard by its well-known port can
throttle that port alone: every other UDP flow, and TCP, run at the link's
rate, so a plain UDP test says the path is fine while the tunnel crawls.
Moving the tunnel to another port takes it out of the rule.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: InBench, Verify: Measured, BothEnds: true,
			Bound: Bound{Key: "UDP arrived with port", As: RateHeld}},
		// The far end's half, then the near end's.
		Remedies: []Remedy{
			{Kind: remedy.KindWGListenPort, Params: map[string]Values{"interface": wgInterface, "port": Between(1, 65535).On(movesListenPort), "uci_section": uciSectionParam}},
			{Kind: remedy.KindWGPeerEndpoint, Params: map[string]Values{"interface": wgInterface,
				"peer":     Named("the far end's public key, a peer of the interface").On(peerOfInterface),
				"endpoint": Named("the far end's address at the port after its port now").On(movesEndpoint)}},
		},
		Example: Example{
			Host: "UDP from port 51820 loses 74% at 190 Mbit/s while UDP on another port loses none",
			// Both halves, as the far end's finding and the near end's carry them.
			Fixes: func() []finding.Fix {
				far, err := remedy.WGListenPort("wg0", 51821, remedy.Linux, "")
				out := fixes("On the far end: move its WireGuard to listen port 51821, together with the peer's endpoint on this end (the other half)", far, err)
				near, err := remedy.WGPeerEndpoint("wg0", exampleFarKey, exampleEndpoint+":51821", remedy.Linux)
				return append(out, fixes("On this end: point the far end's peer at "+exampleEndpoint+":51821, together with its new listen port (the other half)", near, err)...)
			},
		},
	},
	{
		ID:    PathUDPPoliced,
		Title: "The path polices UDP: the tunnel's packets are dropped above a rate TCP is not",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (UDP outside the tunnel)", Package: "internal/probe/udppath", Doc: `When the tunnel is slow in a direction and nothing found so far
explains it, doctor offers UDP outside the tunnel (iperf3 -u to the far end's
endpoint address, on a port of its own) at the rate TCP carried there, for two
seconds. Datagrams lost on the path (the receiver's own socket drops taken
out) above 10% while TCP ran at that rate mean the path polices UDP; above
50%, critical. A policer drops in every run, so a run that loses that much
runs once more and the one that lost less stands. Capacity is not a policer:
each such run is followed by TCP on the path the same way, and UDP that
delivered 80% or more of what TCP carried then (or in the bench's slowest
underlay second) met the path's capacity at that moment (a path whose
capacity cycles). The tuning guide's caution: hops may give UDP a share of their
bandwidth TCP does not get. A UDP run that carries the rate clears the path
of policing: the multi-WAN router's 5G collapse (raw UDP at 300 Mbit/s with
0.18% loss, WireGuard at 1.7) is no policer. Fix: not on the hosts: another
uplink or carrier, or a cap below the policer.`}},
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `WireGuard is nothing but UDP to the path. A policer that lets TCP through
at the link's rate but drops UDP above a lower one leaves the tunnel what it
allows, and TCP inside the tunnel backs off at every drop; a TCP-only baseline
outside the tunnel never sees it.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: InBench, Verify: Measured,
			Bound: Bound{Key: "UDP arrived", As: RateHeld}},
		Example: Example{
			Host: "UDP outside the tunnel loses 75% at the 190 Mbit/s TCP carries; 48 Mbit/s arrive",
			Fixes: func() []finding.Fix {
				return []finding.Fix{
					{Description: "Show the carrier UDP policed where TCP runs, and ask them to stop; or move the tunnel to an uplink that does not police it",
						Commands: []string{"iperf3 -c " + exampleEndpoint + " -u -b 190M -t 10", "iperf3 -c " + exampleEndpoint + " -t 10"}},
					{Description: "Keep the tunnel under the policer: cap wg0 at 43 Mbit/s", Commands: []string{"tc qdisc replace dev wg0 root tbf rate 43mbit burst 64kb latency 200ms"}},
				}
			},
		},
	},
	{
		ID:    RouteECMPSuggested,
		Title: "One tunnel is CPU- or flow-bound on a host with several uplinks or tunnels",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Package: "internal/doctor", Doc: `After its bench, for each end whose tunnel was bound
to one CPU (cpu.saturated during a tunnel run) or to one flow (with several
streams measured, one stream below 60% of them), and that has more than one
default route's uplink or WireGuard interface, suggests spreading the flows
over several tunnels behind a multipath route, as the ECMP case did (874
Mbit/s through one tunnel, 1.56 Gbit/s through two). A note: the suggestion
is where the capacity is; wgperf fix ecmp --server plans and applies the
tunnels on both ends.`},
			{Kind: "probe", Name: "wgperf fix ecmp --server", Package: "internal/fix", Doc: `Plans the change on both ends of a
tunnel under this finding, one on each end: its fix is that end's half of
the ECMP change (ecmp-tunnels), naming the public keys the other end's new
tunnels will have.`}},
		Severities: []finding.Severity{finding.Info},
		Why: `One tunnel is one peer, one uplink and one flow hash: a CPU at its limit or a
per-flow cap holds it however much capacity the host has beside it. Several
tunnels with a multipath route over them add the capacity up.`,
		Cases:  []string{CaseECMP},
		Doctor: Doctor{Role: Environment, Impact: 0.05, Side: Both, Bench: InBench, Verify: Measured},
		// No Remedies: the ECMP fix (remedy.KindECMP) has two halves whose
		// peer keys "wgperf fix ecmp --server" reads from both ends before it
		// plans them, so a findings file (fix --from) may never ask for one;
		// doctor suggests the command.
		Example: Example{
			Host: "a host with two uplinks whose one tunnel keeps a CPU at 100% while it carries traffic",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{
					Description: "Write the tunnels (wg-quick, Table = off) and the multipath route for two tunnels, then measure the scaling",
					Commands:    []string{"wgperf fix ecmp --tunnels 2"},
				}}
			},
		},
	},
	{
		ID:    RouteEndpointUplink,
		Title: "The tunnel's endpoint is reached over a slower uplink than another one offers",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (the underlay through each uplink)", Package: "internal/probe/uplinks", Doc: `On a host with more than one default route (multi-WAN),
doctor measures TCP to the far end's endpoint through each uplink the
endpoint's route does not take (iperf3 --bind-dev) beside the bench's
underlay run, which follows the tunnel's own route: another uplink carrying
twice as much means the tunnel rides the slow one, whatever put it there (a
host route added by hand, a policy rule, a failover policy that never fails
back), which no passive check can judge. The case: a router's tunnel ran over
the 5G backup for two months while the fiber was up. Fix: route the endpoint
through the faster uplink.`}},
		Severities: []finding.Severity{finding.Critical},
		Why: `The tunnel runs at the rate of the uplink its endpoint's route takes. When
that is the slow one, the underlay measured beside the tunnel follows the same
route, so the tunnel seems to keep up with its link while a faster uplink sits
idle.`,
		Cases: []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: NotInBench, Verify: Measured,
			Gain: "the tunnel moves to the faster uplink: its rate instead of the slower one's " +
				"(the underlay bench to the endpoint follows the tunnel's own route, so it cannot show the difference)"},
		Remedies: []Remedy{
			{Kind: remedy.KindEndpointRoute, Params: map[string]Values{
				"endpoint": Named("a peer's endpoint address").On(aPeerEndpoint), "table": OneOf("main"),
				"via": Named("the faster uplink's gateway").On(uplinkGateway), "dev": Named("its device").On(uplinkDev),
			}},
		},
		Example: Example{
			Host: "the endpoint " + exampleEndpoint + " is reached over eth1 at 19 Mbit/s while eth0 (via 198.51.100.1) reaches it at 190",
			Fixes: func() []finding.Fix {
				r, err := remedy.RouteRepoint(exampleEndpoint, remedy.Route{Via: "198.51.100.1", Dev: "eth0"})
				return fixes("Route the endpoint "+exampleEndpoint+" through eth0 (via 198.51.100.1)", r, err)
			},
		},
	},
	{
		ID:         RouteStaleEndpoint,
		Title:      "Endpoint host route pinned to an uplink that is not the preferred one",
		Check:      &staleEndpoint,
		Severities: []finding.Severity{finding.Critical},
		Why: `The tunnel runs over whatever uplink that host route names, so a stale one
keeps it on the slow backup long after the fast uplink is back, for months,
with nothing alerting.`,
		Cases: []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: NotInBench, Verify: Measured,
			Gain: "the tunnel moves to the preferred uplink: its rate instead of the backup's " +
				"(the underlay bench to the endpoint follows the same stale route, so it cannot show the difference)"},
		Remedies: []Remedy{
			{Kind: remedy.KindEndpointRoute, Params: map[string]Values{
				"endpoint": Named("a peer's endpoint address").On(endpointFix), "table": OneOf("main"),
				// re-pointed at the preferred uplink, or on OpenWrt no host route at all
				"via":           Named("the preferred default route's gateway").On(preferredGateway).Optional(),
				"dev":           Named("its device").On(preferredDev).Optional(),
				"uci_interface": Named("the WireGuard interface's uci section").On(endpointUCISection).Optional(),
			}},
		},
		Example: Example{
			Host: "the endpoint " + exampleEndpoint + " is pinned via " + exampleGateway + " dev eth1 (the backup) while eth0 is the preferred uplink; on OpenWrt, the WireGuard interface wg0",
			Fixes: func() []finding.Fix {
				r, err := remedy.RouteDel(exampleEndpoint, remedy.Route{Dst: exampleEndpoint, Via: exampleGateway, Dev: "eth1"})
				out := fixes("Delete the stale host route so the endpoint follows the preferred default route", r, err)
				r, err = remedy.NoHostRoute(exampleEndpoint, "wg0")
				return append(out, fixes("On OpenWrt: stop netifd pinning a host route to the endpoint (split tunnel)", r, err)...)
			},
		},
	},
	{
		ID:         RouteUplinkFlaps,
		Title:      "mwan3 declared the preferred uplink offline, or its health checks keep failing",
		Check:      &uplinkFlaps,
		Severities: []finding.Severity{finding.Warning},
		Why: `Each time mwan3 declares the preferred uplink offline, whatever routes are
made in that moment go via the backup: a WireGuard interface that comes up
then gets its endpoint's host route pinned there for good. Health checks that
fail on a link that works (replies eaten by a firewall limit) bring those
moments about, and the log keeps the history after a reboot or firewall reload
has reset every counter that would explain it.`,
		Cases: []string{CaseMultiWAN},
		// icmp-burst runs wherever mwan3 tracks uplinks: doctor's plan needs no call.
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Gain: costsThroughFailures, Verify: ConfirmOnly},
		Remedies: []Remedy{
			{Kind: remedy.KindEndpointRoute, Params: map[string]Values{
				"endpoint": Named("the peer's endpoint address"), "table": OneOf("main"),
				"uci_interface": Named("the WireGuard interface's uci section").On(proposedBy(&uplinkFlaps, remedy.KindEndpointRoute)),
			}},
		},
		Example: Example{
			Host: "OpenWrt with mwan3: the fiber (wan, eth1) was declared offline 3 times and 102,935 of its health checks failed; the WireGuard interface wg has no nohostroute",
			Fixes: func() []finding.Fix {
				r, err := remedy.NoHostRoute(exampleEndpoint, "wg")
				return fixes("Stop netifd pinning a host route to "+exampleEndpoint+" (split tunnel): it then follows mwan3's default route through every flap", r, err)
			},
		},
	},
	{
		ID:    TCPBuffersSmall,
		Title: "TCP buffer maximum below the path's bandwidth-delay product",
		Check: &buffersSmall,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench and doctor", Package: "internal/probe/bench", Doc: `The bench reads its own
flows' TCP state with ss -tin at both ends, three times during each tunnel TCP
run. A single stream that waited at least 20% of its busy time for the
receiver's window (rwnd_limited), below the path's BDP (the underlay's rate
of the same direction times the bench's round trip), where the receiver's
tcp_rmem maximum is under twice that BDP, reports this finding on the
receiver; one that waited as long for its own send buffer (sndbuf_limited)
with tcp_wmem under twice the BDP, on the sender. Recorded in the lab
(100 Mbit/s, 20 ms): tcp_rmem max 256 KiB held a flow to 54 Mbit/s,
rwnd_limited 37%; tcp_wmem max 128 KiB to 40 Mbit/s, sndbuf_limited 72%.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `TCP cannot have more data in flight than its buffer, so one connection tops
out at buffer / round-trip time: 4 MiB over 50 ms is about 670 Mbit/s, however
fast the tunnel is.`,
		Cases: []string{CaseTuning},
		// The bench's finding says the rate its measured window allows.
		Doctor: Doctor{Role: Cause, Impact: 0.4, Side: Both, Bench: InBench, Verify: Measured,
			Bound: Bound{Key: "allows (", As: RateHeld}},
		Remedies: []Remedy{
			{Kind: remedy.KindSysctl, Params: map[string]Values{"key": OneOf("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"), "value": Triple(1<<20, maxInt, 1<<20).On(raises)}},
		},
		Example: Example{
			Host: fmt.Sprintf("net.ipv4.tcp_rmem is \"4096 131072 1048576\" and the path is %s", Options{}.pathDescription()),
			Fixes: func() []finding.Fix {
				want := tcpBufferWant(Options{}.bdpBytes())
				return sysctlFix(fmt.Sprintf("Raise the receive buffer maximum to %s", mib(want)), "net.ipv4.tcp_rmem", fmt.Sprintf("4096 131072 %d", want))
			},
		},
	},
	{
		ID:    TCPCongestionControl,
		Title: "Loss-based congestion control (CUBIC/Reno) on a host that sees loss",
		Check: &congestionControl,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench and doctor's long run", Package: "internal/probe/bench", Doc: `The bench reads each single-stream tunnel run's
sender algorithm, retransmits and congestion window: a CUBIC or Reno window
that swings at least 2x, or stays small while the tunnel falls short of the
underlay, reports this finding (the tuning guide's "bouncing around, or
narrowing significantly"); so does a window that stays where the path's loss
holds it (at least 0.5% of the segments the sender sent through the tunnel and
outside it retransmitted, the window within twice the Mathis window), whatever
the ratio: on a lossy path the underlay's own CUBIC crawls too. Too few
retransmits to tell are sampled again, tunnel and underlay. Doctor's 30-second run proves it where a short run
cannot: a CUBIC or Reno stream that retransmitted while 4 streams through the
same tunnel carried at least 2.5 times its rate was held back by its own
window, not by the path, and its collapse cycles are the algorithm's answer to
loss (recorded on a 2%-loss WAN: 4.9 times), so no rate cap is swept for them.
A knee caps the streams together (recorded: 1.7 times).`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `CUBIC and Reno halve their window at every loss and grow it back slowly.
Through a tunnel with a little loss the window never gets large, so a long path
carries a fraction of what it could.`,
		Cases:  []string{CaseTuning, CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.4, Side: Sender, Bench: InBench, Verify: Measured},
		Remedies: []Remedy{
			{Kind: remedy.KindCongestion, Params: map[string]Values{"algorithm": OneOf("bbr")}},
		},
		Example: Example{
			Host: "a Linux 6.1 sender using cubic, with tcp_bbr available",
			Fixes: func() []finding.Fix {
				r, err := remedy.Congestion("bbr", false, "6.1.0")
				return fixes("Switch TCP congestion control to BBR", r, err)
			},
		},
	},
	{
		ID:    ThroughputAsymmetric,
		Title: "One direction of a tunnel loses what the other delivers",
		Cross: &crossDelivery,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench",
			Doc: `Compares the tunnel's two directions at the same stream count: the slow
one below half of the fast one is a warning, unless the underlay is about as
lopsided (an ADSL line's nature, not the tunnel's fault). One direction far
slower than the other points at something one-sided: a black hole that way, a
stale endpoint route on one end, a receiver dropping UDP.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `Loss in one direction only points at that direction's path or receiver: a
hop whose ICMP is blocked, a receiver dropping UDP. The slow direction is often
the one users notice (uploads, backups).`,
		Cases:  []string{CaseMultiWAN, CasePMTUD, CaseRemoteUsers},
		Doctor: Doctor{Role: Symptom},
		Example: Example{
			Host:  "ssh:root@site-a sends to ssh:root@site-b and loses 5%",
			Fixes: func() []finding.Fix { return []finding.Fix{deliveryFix("ssh:root@site-a", "ssh:root@site-b")} },
		},
	},
	{
		ID:    ThroughputCollapseKnee,
		Title: "Pushed past a knee the tunnel collapses in cycles; capped below it, it holds steady",
		Probes: []Source{{Kind: "probe", Name: "wgperf shape-sweep (and doctor, after a long run saw collapse cycles)", Package: "internal/probe/shaping", Doc: `Caps the sender's tunnel interface with tbf at a few
rates below the level a long run climbed to, measures each for longer than
one collapse cycle, and compares them with the uncapped run: a cap that holds
a steady rate (per-second rates within 10%, no collapse) and carries more than
the uncapped run's mean, where the uncapped tunnel collapsed and recovered, is
the knee's fix; a cap that is steadier only by being slower is none. Cycles
the underlay shows too are the path's, and no cap is swept. The case: remote
users' uploads swung between 180 and 90 Mbit/s every 15-20 s as the
receiver's one CPU saturated; capped, the tunnel held steady and carried more
on average (~188 Mbit/s against a mean of 165). Fix: that cap.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `Something behind the tunnel (a receiver's CPU, a queue) collapses when it is
pushed past a rate and recovers a few seconds later, so the sender climbs past
it again and again. The collapses stall what users run (video, backups) and
cost more than the peaks bring; a rate just below the knee is steadier and
moves more on average.`,
		Cases: []string{CaseRemoteUsers},
		// A knee the sweep proved is what made the tunnel collapse where UDP
		// outside it did not (the receiver's CPU meets only the tunnel's
		// packets): it names the mechanism that finding leaves open.
		Doctor: Doctor{Role: Cause, Impact: 0.4, Side: Sender, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "a steady rate just below the knee instead of collapses every few seconds " +
				"(a long run shows it; a short bench may land on either phase)",
			Underlies: []finding.ID{WGSpecificCollapse}},
		Remedies: []Remedy{
			{Kind: remedy.KindTBFCap, Params: map[string]Values{"device": Named("the sender's tunnel interface").On(onWireGuard), "rate": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "wg0 on the sender collapses from 180 to 90 Mbit/s every 15 s; capped at 150 Mbit/s it holds steady",
			Fixes: func() []finding.Fix {
				r, err := remedy.TBF("wg0", "150mbit")
				return fixes("Cap wg0 at 150 Mbit/s, just below the knee", r, err)
			},
		},
	},
	{
		ID:    ThroughputOscillation,
		Title: "Throughput collapses periodically on a shaped uplink",
		Probes: []Source{{Kind: "probe", Name: "wgperf bench / shape-sweep", Package: "internal/probe/bench", Doc: `Reads iperf3's per-second intervals: throughput that
collapses periodically (a sawtooth of loss and recovery) on a shaped uplink.
The case: remote users' uploads swung between full rate and a fraction every
15-20 s. Fix: a tbf cap just below the knee (wgperf shape-sweep finds it),
which trades a little peak for a steady rate.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `A sawtooth of collapse and recovery averages well below the link, and users
see stalls every few seconds. A steady rate a little below the peak moves more
data.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Symptom, Calls: ProbeShaping, Load: "an oscillating rate"},
		Remedies: []Remedy{
			{Kind: remedy.KindTBFCap, Params: map[string]Values{"device": Named("the sender's tunnel interface").On(onWireGuard), "rate": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "wg0 on the sender collapses above about 220 Mbit/s",
			Fixes: func() []finding.Fix {
				r, err := remedy.TBF("wg0", "200mbit")
				return append([]finding.Fix{{
					Description: "Find the most stable rate cap on the sender's tunnel interface",
					Commands:    []string{"wgperf shape-sweep --client ssh:root@site-a --server ssh:root@site-b"},
				}}, fixes("Cap wg0 at 200 Mbit/s, below the collapse", r, err)...)
			},
		},
	},
	{
		ID:    ThroughputShaperCap,
		Title: "A shaper on the tunnel's interface is its ceiling: the path carries more than the cap lets through",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Package: "internal/check", Doc: `Reads the root qdisc of each end's tunnel interface
(tc -j qdisc show: tbf's rate, cake's bandwidth; an htb's root class's ceil
from tc class show) and, after its bench, compares it with both runs in the
direction that end sends: a tunnel that reached 80% of the cap while the
underlay carried 1.15 times the cap or more is held by the cap. The case:
the remote users' tunnel was capped at 150 Mbit/s on wg0 against collapse
cycles; once its UDP buffers were fixed the path carried about 450, and the
cap was raised to 450. Fix: raise the cap to the path's rate, or remove it.`}},
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A cap is set against a problem (collapse cycles, a receiver that drops under
bursts) and stays when the problem is fixed: then it is the tunnel's ceiling,
and no other tuning makes the tunnel faster. Critical when it holds the tunnel
below half of what the path carries.`,
		Cases: []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Sender, Bench: InBench, Verify: Measured,
			Bound: Bound{Key: " rate on ", As: RateHeld}},
		Remedies: []Remedy{
			{Kind: remedy.KindTBFCap, Params: map[string]Values{"device": Named("the sender's tunnel interface").On(onWireGuard), "rate": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "wg0 on the sender capped by tbf at 150 Mbit/s; the tunnel carried 142 and the underlay 452",
			Fixes: func() []finding.Fix {
				return shaperCapFixes("wg0", facts.Shaper{Qdisc: "tbf", RateMbit: 150}, 452)
			},
		},
	},
	{
		ID:    ThroughputTunnelRatio,
		Title: "The tunnel carries less than 90% of the link under it",
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Package: "internal/probe/bench", Doc: `Runs iperf3 through the tunnel and around it (to the
peer's endpoint address), both directions, single and parallel streams. A
healthy single-hop tunnel carries at least 90% of the link under it (the
tuning guide's rule; 50% of the worst hop over several hops). Below that it is
a symptom: wgperf doctor ranks the causes the other findings name.`}},
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `It is the symptom people notice: the tunnel is slower than the link under it.
It names no cause by itself; the other findings on the same hosts, ranked by
wgperf doctor, say which one costs the throughput.`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Symptom},
		Example: Example{
			Host: "the tunnel from ssh:root@site-a to ssh:root@site-b carries 40% of the underlay",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{
					Description: "Rank the causes on both ends",
					Commands:    []string{"wgperf doctor --client ssh:root@site-a --server ssh:root@site-b"},
				}}
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
	{
		ID:         WGAllowedIPsMismatch,
		Title:      "Kernel WireGuard dropped packets its peers' AllowedIPs do not cover",
		Check:      &wgAllowedIPsMismatch,
		Severities: []finding.Severity{finding.Warning},
		Why: `WireGuard accepts a peer's packet only from the addresses that peer's
AllowedIPs list, and sends a packet only to a peer whose AllowedIPs cover its
destination. When the two ends disagree, say a LAN routed into the tunnel on
one side and missing from the other side's AllowedIPs, that traffic silently
never arrives while the tunnel's own addresses work.`,
		Cases: []string{CasePMTUD, CaseECMP},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "traffic between the networks the ends' AllowedIPs disagree on gets through (the bench between the tunnel's own addresses cannot show it)"},
		Example: Example{
			Host: "kernel WireGuard wg0 counted 5 rx_frame_errors: a peer sent from 10.99.0.1, outside its AllowedIPs",
			Fixes: func() []finding.Fix {
				s := &facts.Snapshot{WireGuard: []facts.WGInterface{{Name: "wg0", Implementation: "kernel"}},
					Links: []facts.Link{{Name: "wg0", Stats: &facts.LinkStats{RxErrors: 5, RxFrameErrors: 5}}}}
				fs, _ := runWGAllowedIPsMismatch(s, Options{})
				return fs[0].Fixes
			},
		},
	},
	{
		ID:         WGHandshakeStale,
		Title:      "Peer's latest handshake is old or missing",
		Check:      &wgHandshakeStale,
		Cross:      &crossHandshake,
		Severities: []finding.Severity{finding.Info, finding.Warning, finding.Critical},
		Why: `Without a handshake in the last 3 minutes WireGuard has no valid session:
nothing passes through the tunnel to that peer until one completes.`,
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: InBench, Verify: Measured},
		Example: Example{
			Host:  "peer " + exampleEndpoint + ":51820 of wg0 has not completed a handshake",
			Fixes: func() []finding.Fix { return []finding.Fix{handshakeFix("wg0", exampleEndpoint+":51820")} },
		},
	},
	{
		ID:         WGNATNoKeepalive,
		Title:      "A tunnel end behind NAT sends no keepalive: the far end cannot reach it once the NAT forgets the mapping",
		Cross:      &crossNATKeepalive,
		Severities: []finding.Severity{finding.Warning},
		Why: `A NAT keeps a UDP mapping only while packets use it. WireGuard sends nothing
on an idle tunnel, so the mapping expires, and the far end's packets, sent to
the endpoint it learned, find nothing behind it: a road warrior or branch
behind a home router can reach the hub, but the hub (or the other site) cannot
reach it until it sends again. Health checks, monitoring and anything started
from the far side fail while the tunnel looks up from the NATed side.`,
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "the far end reaches this end through the tunnel at any time, not only while this end's own traffic keeps the NAT's mapping open"},
		Remedies: []Remedy{{Kind: remedy.KindWGPeerKeepalive, Params: map[string]Values{"interface": wgInterface,
			"peer":    Named("the far end's public key, a peer of the interface").On(natPeer),
			"seconds": OneOf(strconv.Itoa(natKeepalive))}}},
		Example: Example{
			Host: "the far end sees this end at 203.0.113.1:51820, an address it does not have, and its peer for the far end has no keepalive",
			Fixes: func() []finding.Fix {
				r, err := remedy.WGPeerKeepalive("wg0", exampleFarKey, natKeepalive, remedy.Linux)
				return fixes("Make wg0 send the far end a keepalive every 25 s, so the NAT keeps its mapping open", r, err)
			},
		},
	},
	{
		ID:    WGSharedKey,
		Title: "Two devices hold the same WireGuard key: the far end's endpoint for it takes turns between them",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (peer endpoints sampled through the bench)", Package: "internal/probe/roaming", Doc: `While its bench runs, doctor reads both ends' WireGuard peers every second
("wg show all dump"): the endpoint each holds for each key, and its latest
handshake. A key whose endpoint switches back and forth between the same
addresses (three switches, two of them returns: X → Y → X → Y) is held by two
devices: a device that roams moves on, it does not keep coming back. Critical:
each device pulls the replies meant for the other and their handshakes
replace each other's sessions. The fix is by hand: a key of its own for one
of them, added here as a peer of its own.`}},
		Severities: []finding.Severity{finding.Critical},
		Why: `A cloned VM or a config copied to a second laptop brings its private key
along. WireGuard accepts both devices as the one peer and sends everything to
whichever spoke last, so each steals the other's traffic and sessions: the
tunnel works in bursts or not at all, and every end looks configured right.`,
		// A bench may cross between the turns: its ratio does not show the cost.
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "each device gets its own session and its own replies: the tunnel stops failing in bursts"},
		Example: Example{
			Host: "the far end's endpoint for this key switched 6 times in 20 s between 198.51.100.2:51820 and 198.18.0.2:51820",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "Give one of the two devices a key of its own, and add its new public key here as another peer",
					Commands: []string{"wg genkey | tee private.key | wg pubkey", "wg show wg0 endpoints"}}}
			},
		},
	},
	{
		ID:    WGSpecificCollapse,
		Title: "The tunnel collapses where UDP outside it does not: the cause is WireGuard's own, not the path's UDP",
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (UDP outside the tunnel)", Package: "internal/probe/udppath", Doc: `When the tunnel carries less than half of what UDP
outside it delivered at the same rate, on a port of its own and with
WireGuard's port number alike, no
policer or port throttle explains it: something treats WireGuard's packets
apart (their size or fragments, their handshake, the implementation at
either end). The multi-WAN router's 5G epilogue: raw UDP over 5G carried 300
Mbit/s with 0.18% loss, port and throttling were ruled out, and WireGuard ran
at 1.7 Mbit/s. Warning; the fixes are the next measurements.`}},
		Severities: []finding.Severity{finding.Warning},
		Why: `A collapse no UDP test outside the tunnel reproduces is not the path
dropping UDP: blaming a policer sends the user to the carrier for nothing.
What is left is what makes WireGuard's packets different, and that needs
capturing on both ends rather than more throughput tests.`,
		Cases:  []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.5, Side: Both, Bench: InBench, Verify: Measured},
		Example: Example{
			Host: "the tunnel carries 1.7 Mbit/s where UDP outside it delivered 300 of 300 offered on its own port and on WireGuard's",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "Capture the tunnel's packets on both ends during a transfer and compare what left with what arrived (sizes, fragments)",
					Commands: []string{"tcpdump -ni eth0 -c 2000 -w wg.pcap udp port 51820"}}}
			},
		},
	},
	{
		ID:         WGUserspace,
		Title:      "WireGuard served by a userspace implementation",
		Check:      &wgUserspace,
		Severities: []finding.Severity{finding.Info},
		Why: `Every packet crosses between the kernel and a process, so the tunnel's
ceiling is that process's CPU; the same hardware carries more with the kernel
module.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.05, Side: Both, Bench: InBench, Verify: Measured, Load: "a userspace WireGuard implementation (its CPU is the ceiling)"},
		Example: Example{
			Host:  "wg0 is served by wireguard-go on a Linux 6.1 host",
			Fixes: func() []finding.Fix { return []finding.Fix{userspaceFix("wg0")} },
		},
	},
}
