// Package scenario reproduces real investigations in the lab and solves
// them end to end: build the lab, break it the way that case's network was
// broken, run "wgperf doctor" between the two sites (which must rank the
// case's cause first), apply the fix it proposes, measure again.
//
// A scenario is data (the lab, the breakage, the finding it must produce), so
// adding one is a few lines in Catalog; Run does the rest.
package scenario

import (
	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/lab"
)

// catalogCongestion is the TCP congestion control the lab's nodes send with
// unless a scenario's lab says otherwise (a Break may still switch one node):
// the cases were written on hosts whose default is BBR, and a lab that
// inherited a distro's CUBIC would add retransmission findings to every case.
const catalogCongestion = "bbr"

// congestionOf is the congestion control sc's lab runs with.
func congestionOf(sc Scenario) string { return orDefault(sc.Lab.Congestion, catalogCongestion) }

// delayedRate is the most a scenario with a delay element runs at: every
// packet crosses the userspace delay element and both userspace tunnel ends
// on the same CPUs, so a 200 Mbit/s tunnel dipped below 0.9 of its underlay
// in 2 s runs whenever another job shared a 2-core machine; at 100 it held
// 0.94-0.96 (capacity sizing may still lower it on a slower machine).
const delayedRate = 100

// liftCPUQuota removes the CPU quota of the cpu-quota scenario's lab (its
// cgroup "wgl-NAME-cpu", NAME read from A's interface wg-NAME-a) as its
// owner would: "max" in cpu.max (v2), -1 in cpu.cfs_quota_us (v1). Nodes run
// under "ip netns exec", whose private /sys hides the cgroup mounts; the
// shell's parent (the scenario's process) sees them through /proc/PPID/root.
const liftCPUQuota = `n={wg}; n=${n#wg-}; n=${n%-a}; r=/proc/$PPID/root/sys/fs/cgroup; ok=
for d in $r/cpu $r/cpu,cpuacct $r $r/unified; do g=$d/wgl-$n-cpu
if [ -f $g/cpu.max ]; then echo max > $g/cpu.max && ok=1; elif [ -f $g/cpu.cfs_quota_us ]; then echo -1 > $g/cpu.cfs_quota_us && ok=1; fi
done; [ -n "$ok" ]`

// blockICMPErrors stops a host from hearing that its packets are too big:
// ICMP blocked site-wide, on the LAN hosts themselves.
const blockICMPErrors = "add table inet host; add chain inet host in { type filter hook input priority 0; icmp type destination-unreachable drop; }"

// blockFragNeeded stops a gateway from telling the hosts behind it that their
// packets are too big for the tunnel (ICMP type 3 code 4, as the PMTUD black
// hole case's site blocked it).
const blockFragNeeded = "add table inet site; add chain inet site out { type filter hook output priority 0; icmp type destination-unreachable icmp code frag-needed drop; }"

// Catalog lists the scenarios in the order "lab run --all" runs them.
var Catalog = []Scenario{
	{
		Name: "healthy", Case: caseTuning,
		KernelLane: "no false alarm at the module's own rates (its crypto runs in the kernel, not in a process doctor can see)",
		// The verdict needs 0.9 of the underlay, and an emulated guest carried
		// 20 Mbit/s through the module at 0.81 to 0.96, lowest as the first
		// run of a fresh guest (which a replay is too): two make test runs
		// failed so. At 10, half the crypto to keep up with, it carried 0.95
		// and 0.96 as the first run of a fresh guest.
		KernelMbit: 10,
		Symptom:    "none: a correctly tuned tunnel",
		Lab:        lab.Config{Underlay: lab.Shape{RateMbit: 200}},
	},
	{
		Name: "pmtud-blackhole", Case: casePMTUD,
		KernelLane: "the module clears DF on its outer packets: the black hole shows on the inner path only",
		Symptom:    "ssh works, bulk TCP through the tunnel stalls",
		// A 1400-byte hop mid-path whose router drops ICMP frag-needed.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true},
		Probes: []Probe{ProbeMTU},
		Expect: catalog.MTUPMTUDBlackhole,
		// B sits on the narrow link and can see it locally; both ends need the
		// smaller MTU, or the black hole stays open from B to A.
		Also:   []finding.ID{catalog.MTUTunnelTooLarge},
		FixIDs: []finding.ID{catalog.MTUPMTUDBlackhole, catalog.MTUTunnelTooLarge},
		On: map[lab.Implementation]Outcome{lab.Kernel: {
			Why: "kernel WireGuard clears DF on its outer packets: the 1400-byte hop fragments them instead of black-holing them, " +
				"so the tunnel keeps most of its rate and pays for fragmenting; the DF black hole remains for traffic outside the tunnel " +
				"that does not learn B's MSS (B sits on the 1400-byte link, so the hosts' own TCP to each other negotiates segments " +
				"that fit, and nothing stalls: underlay-blackhole is the kernel case where the hosts' TCP stalls and the black hole is the verdict)",
			Symptom: "the tunnel works, but every full-size packet is fragmented at a narrow hop",
			Expect:  catalog.MTUTunnelTooLarge, Also: []finding.ID{catalog.MTUPMTUDBlackhole}, Latent: true,
			// A tunnel that keeps its rate calls for no probe; if doctor runs the
			// MTU search anyway (a slow bench), the DF black hole nothing
			// stalled on is a note.
			Probes: []Probe{},
		}},
	},
	{
		Name: "underlay-blackhole", Case: casePMTUD,
		KernelLane: "on the module a black hole where the underlay's own TCP stalls too was once reported as info",
		Symptom:    "one direction stalls, through the tunnel and outside it",
		// A hop mid-path drops every packet above 1400 bytes on its way to B
		// and no router says why, while both ends keep MTU 1500: the hosts'
		// own TCP from A to B stalls as much as the tunnel's. Doctor's bench
		// finds that; the lab's baseline in that direction is the other
		// way's (both links are shaped alike).
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, SilentHopMTU: 1400},
		Probes: []Probe{ProbeMTU},
		Expect: catalog.MTUPMTUDBlackhole,
	},
	{
		Name: "return-blackhole", Case: casePMTUD,
		Symptom: "uploads run, downloads stall: the way back drops large packets",
		// Asymmetric routing: the return path from B to A crosses a hop that
		// drops every packet above 1400 bytes without a word, while the way
		// out carries 1500. A DF ping from A is lost either way (its reply is
		// as large as its request); echo requests counted where they arrive
		// locate the drop, and the fix goes to B, the sender of the broken
		// direction: A's MTU would fix only the TCP B sends it (through the
		// MSS A advertises), and leave B's other traffic broken.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, SilentHopMTU: 1400, SilentHopToA: true},
		Probes: []Probe{ProbeMTU},
		Expect: catalog.MTUPMTUDBlackhole,
		FixOn:  []string{"b"},
	},
	{
		Name: "udp-policed", Case: caseTuning,
		Symptom: "the tunnel crawls over an uplink where TCP outside it runs at full speed",
		// The tuning guide's caution that hops may treat UDP apart from TCP
		// (not the multi-WAN router's 5G collapse, whose raw UDP ran at 300
		// Mbit/s). R polices UDP, each way, to a quarter of the link's rate
		// and lets TCP through at all of it.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, UDPPolicePct: 25},
		Probes: []Probe{ProbeUDPOutside},
		Expect: catalog.PathUDPPoliced,
		// Nothing on the hosts is the cause: the path stops policing (another
		// uplink, or the carrier lifts it), and the tunnel gets the link.
		PathFix: []Command{on("r", "nft", "flush chain inet wgperf_lab udp_police")},
	},
	{
		Name: "port-throttled", Case: caseTuning,
		Symptom: "the tunnel crawls while UDP and TCP outside it run at full speed",
		// A carrier that recognises WireGuard by its port (the field's
		// advice: "try another port"). R polices the UDP carrying the
		// tunnel's port, source or destination, each way, to a quarter of
		// the link, and passes other UDP and TCP; A listens on a port of its
		// own, as most clients do, so its iperf3 can send from B's.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, PortPolicePct: 25, ClientPort: 51900},
		Probes: []Probe{ProbeUDPOutside},
		Expect: catalog.PathPortThrottled,
		// The fix doctor --fix applies, both ends or neither: B, the far
		// end, moves to the next port first, then A's peer follows it,
		// verified through the tunnel; B's change is rolled back unless A's
		// is kept.
		FixOn: []string{"b", "a"},
	},
	{
		Name: "port-throttled-one-port", Case: caseTuning,
		Symptom: "the tunnel crawls while UDP and TCP outside it run at full speed, and both ends listen on 51820",
		// The same carrier, with both ends on WireGuard's port, as most
		// site-to-site tunnels are: doctor sends UDP to the far end's
		// WireGuard port through a temporary nft rewrite, and A's datagrams
		// leave from 51820 too, so A's half moves its own listen port with
		// its peer's endpoint (wg-port-move), B's its listen port.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, PortPolicePct: 25},
		Probes: []Probe{ProbeUDPOutside},
		Expect: catalog.PathPortThrottled,
		FixOn:  []string{"b", "a"},
	},
	{
		Name: "collapse-cycles", Case: caseRemoteUsers,
		Symptom: "uploads swing between full rate and a fraction every few seconds",
		// The remote users' NAS: its userspace WireGuard, on one CPU,
		// collapsed whenever the sender pushed past a knee and recovered
		// seconds later. R's knee passes A's tunnel packets up to 60% of the
		// link, then collapses to half for 4 s: cycles of about 6 s that
		// 3-second runs cannot see and a 30-second run does.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, KneePct: 60},
		Probes: []Probe{ProbeLongRun, ProbeShaping},
		Expect: catalog.ThroughputCollapseKnee,
		// The knee meets only the tunnel's packets, as the NAS's CPU did: UDP
		// outside the tunnel runs clean, so the collapse is WireGuard's own
		// too (the knee, ranked above it, is how).
		Also: []finding.ID{catalog.WGSpecificCollapse},
		NotOn: map[lab.Implementation]string{lab.Kernel: "the case is a userspace implementation pinned to one CPU; kernel WireGuard " +
			"spreads its crypto over every CPU's workers, so its receive side does not hit one CPU's knee (its overload is the backlog, found as such)"},
		// The knee is on A's direction; a cap below it keeps the upload
		// steady at about 80% of the level the long run climbed to: 0.50 of
		// the link at 200 Mbit/s, 0.36 at 50 and at 20, where TCP stalls
		// outright in the collapsed phase and climbs less far (before: 0.27,
		// 0.05 and 0.13). Steady is what the uncapped upload never is.
		UploadOnly: true, Steady: true, MinRatio: 0.3,
	},
	{
		Name: "path-cycles", Case: caseRemoteUsers,
		Symptom: "the tunnel swings between full rate and a fraction every 18 s, and so does the link outside it",
		// The remote users' 15-20 s cycles, had they been the path's: R's
		// links, both ways, fall from the rate to 40% of it for 9 s of every
		// 18 (a radio link, a scheduled shaper, a shared uplink). doctor
		// --thorough's long run sees the tunnel collapse, runs the underlay
		// alone for two of its cycles, finds it cycling alike and says the
		// path cycles: no cap (it would only slow the good phase), no sweep.
		// The path's owner steadies the link (the loop sees its flag gone
		// within a second and puts the full rate back) and the tunnel gets
		// it. Its 3-second runs may all fall in steady phases: --thorough
		// runs the long run whatever they showed.
		Lab:      lab.Config{Underlay: lab.Shape{RateMbit: 200}, PathCycleSeconds: 18},
		Thorough: true,
		Probes:   []Probe{ProbeLongRun},
		Expect:   catalog.ThroughputOscillation,
		PathFix:  []Command{on("r", "sh", "-c", "ip link del dev "+lab.PathCycleFlag+" && sleep 2")},
	},
	{
		Name: "cpu-quota", Case: caseRemoteUsers,
		Symptom: "the tunnel runs at a fraction of the link, stalling and recovering, while no CPU looks busy",
		// The remote users' tunnel ran on a VPS: a userspace WireGuard in a
		// container whose CPU quota (docker --cpus) it runs out of, so it
		// waits for the next period while packets queue, which looks like a
		// knee to cap below. A's wireguard-go gets 5% of one CPU: a share of
		// a CPU, so the tunnel falls far below the link on any machine.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, CPUQuotaPct: 5},
		Expect: catalog.CPUQuotaThrottled,
		// Packets queue while the process waits for its next period: the
		// round trip under load grows on both ends.
		Also: []finding.ID{catalog.LatencyBufferbloat},
		// The quota is the owner's to lift (docker update, systemctl
		// set-property, the cgroup's file): the scenario removes it as they
		// would, through the cgroup's file (liftCPUQuota).
		PathFix: []Command{on("a", "sh", "-c", liftCPUQuota)},
		NotOn: map[lab.Implementation]string{lab.Kernel: "kernel WireGuard has no process to put in a cgroup: its crypto runs in " +
			"kernel workers and softirq on every CPU, which no CPU quota limits"},
	},
	{
		Name: "nat-no-keepalive", Case: caseRemoteUsers,
		Symptom: "a remote site behind a home router reaches the hub, but the hub cannot reach it through the tunnel after a quiet spell",
		// B dials A from behind R's NAT, which forgets an idle UDP mapping
		// after 30 s, and B sends no keepalive. The break is the quiet
		// spell: 12 s for B's last passive keepalive after the lab's ping to
		// go out, then R forgets the mapping (conntrack -D, as the timeout
		// would). A's bench cannot connect; both ends' views show the NAT.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 100}, NATTimeout: 30},
		Break:  []Command{on("r", "sh", "-c", "sleep 12; conntrack -D -p udp")},
		Expect: catalog.WGNATNoKeepalive,
		// The keepalive goes on the NATed side, B; the proof is an idle longer
		// than R keeps a mapping, after which A still reaches B.
		FixOn:     []string{"b"},
		IdleProof: 35,
	},
	{
		Name: "shared-key", Case: caseRemoteUsers,
		Symptom: "the tunnel works in bursts or not at all, and both ends look configured right",
		// Node a2 is a clone of A (a copied VM): A's key and tunnel address,
		// dialling B through an uplink of its own, pinging B twice a second.
		// B's endpoint for A's key takes turns between the two.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 100}, CloneA: true},
		Expect: catalog.WGSharedKey,
		// The fix is the owner's: the clone gets a key of its own (B does not
		// know it yet), and A's tunnel is A's again once A's next handshake
		// (within WireGuard's 5 s retry) moves B's endpoint back.
		PathFix: []Command{on("a2", "sh", "-c", "for d in /sys/class/net/wg-*-a2; do wg genkey | wg set ${d##*/} private-key /dev/stdin; done"),
			on("a", "sh", "-c", "for i in $(seq 20); do ping -c 1 -W 1 "+lab.TunnelB+" >/dev/null && exit 0; done; exit 1")},
	},
	{
		Name: "hub-leg", Case: caseTuning,
		Symptom: "two sites that talk through a hub get a fraction of their own links, and nothing on either site is wrong",
		// A —— R at the underlay's rate, R —— B at a quarter of it: R is the
		// hub both sites tunnel to, and its leg to B is the path's limit.
		// Doctor is told the hub (--via r) and measures each leg.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 80}, HubMbit: 20},
		Via:    []string{"r"},
		Expect: catalog.PathHubLeg,
		// The slow leg's shaper holds a queue the tunnel fills.
		Also: []finding.ID{catalog.LatencyBufferbloat},
		// The leg's owner raises its link: R's and B's shapers on it go.
		PathFix: []Command{on("r", "tc", "qdisc", "del", "dev", "eth-b", "root"), on("b", "tc", "qdisc", "del", "dev", "eth0", "root")},
		// Two WireGuard hops on the lab's shared CPUs: the tuning guide's
		// multi-hop expectation.
		MinRatio: 0.5,
	},
	{
		Name: "healthy-hub", Case: caseTuning,
		Symptom:  "none: two sites that talk through a hub whose legs carry alike",
		Lab:      lab.Config{Underlay: lab.Shape{RateMbit: 40}, HubMbit: 40},
		Via:      []string{"r"},
		MinRatio: 0.5,
	},
	{
		Name: "mtu-fragmentation", Case: caseTuning,
		KernelLane: "the module fragments its outer packets where wireguard-go's DF socket would fail",
		Symptom:    "tunnel crawls: its packets no longer fit the link",
		// The tuning guide's 60/80 rule broken: MTU 1500 on a 1500-byte link.
		// Not the remote users case: its 1420 fit (its path MTU search found
		// 1440), so its 5 → 53 Mbit/s step on lowering it to 1280 is not
		// an oversized MTU's cost, and the lab does not claim it.
		// Kernel WireGuard fragments the outer packets;
		// wireguard-go fragments single sends too but its batched (UDP GSO) sends
		// of oversized segments are refused by the kernel, so the lab crawls harder.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, WGMTU: 1500},
		Expect: catalog.MTUTunnelTooLarge,
		On: map[lab.Implementation]Outcome{lab.Kernel: {
			Why: "kernel WireGuard clears DF: each 1560-byte outer packet leaves as two fragments and arrives, so the tunnel " +
				"keeps most of its rate; the MTU finding is the cost (twice the packets, a whole packet lost with either fragment)",
			Symptom: "every full-size tunnel packet travels as two fragments",
			Latent:  true,
		}},
	},
	{
		Name: "fragments-dropped", Case: caseTuning,
		Symptom: "ssh works, bulk TCP through the tunnel stalls; DF pings find the path MTU",
		// The narrow hop answers DF probes with frag-needed (PMTUD works), but
		// the path loses IP fragments, as some firewalls and carrier NATs do:
		// kernel WireGuard's outer packets (DF clear) are fragmented there and lost.
		Lab:    lab.Config{Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragments: true},
		Probes: []Probe{ProbeMTU},
		Expect: catalog.MTUTunnelTooLarge,
		NotOn: map[lab.Implementation]string{lab.Userspace: "wireguard-go sets DF on its outer packets, so the path never fragments them " +
			"(pmtud-blackhole is its case), and the lab can drop fragments mid-path only with tc actions, which this kernel lacks"},
	},
	{
		Name: "udp-rcvbuf", Case: caseRemoteUsers,
		Symptom: "tunnel crawls while the receiver drops WireGuard datagrams",
		// The NAS's implementation asks for big buffers without SO_RCVBUFFORCE,
		// so the kernel caps them at rmem_max: emulated per socket on the nodes.
		// The host's rmem_max (which child namespaces mirror) is set to a small
		// router's 32 KiB and restored afterwards: this machine drains seed
		// 004's 208 KiB too fast to drop at the lab's rates.
		// The remote-users case's hosts sent with the distro default, CUBIC, over a
		// London–Helsinki path: with a 20 ms RTT, the few datagrams the buffer
		// drops cut CUBIC to a fraction of the link (with BBR, or at the lab's
		// bare sub-millisecond RTT, the same drops cost almost nothing).
		Lab:         lab.Config{Underlay: lab.Shape{RateMbit: delayedRate, DelayMs: 10}, UDPBuffer: lab.UDPBufferCapped},
		HostSysctls: map[string]string{"net.core.rmem_max": "32768", "net.ipv4.tcp_allowed_congestion_control": "reno cubic bbr"},
		Break: []Command{
			on("a", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"),
			on("b", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"),
		},
		Expect: catalog.UDPRcvbufErrors,
		NotOn:  map[lab.Implementation]string{lab.Kernel: "kernel WireGuard receives through the UDP stack's encapsulation hook, not a socket queue: it has no receive buffer to overflow (its receive-side overload is the backlog)"},
		// CUBIC losing to those drops is a true finding too; the buffers are the cause.
		Also: []finding.ID{catalog.TCPCongestionControl},
		// A new rmem_max only reaches sockets opened after it: the fix itself
		// re-opens each end's WireGuard socket (both ends receive), no hand step.
	},
	{
		Name: "shaper-cap", Case: caseRemoteUsers,
		Symptom: "the tunnel stays at the rate it was once capped at, though the path now carries more",
		// The remote users' wg0 cap (tbf 150 Mbit/s against collapse
		// cycles), which held the tunnel below the path once the buffers
		// were fixed: A's tunnel capped at 40% of the lab's rate.
		Lab:        lab.Config{Underlay: lab.Shape{RateMbit: 200}},
		Break:      []Command{on("a", "sh", "-c", "tc qdisc replace dev {wg} root tbf rate $(({rate} * 2 / 5))mbit burst 64kb latency 400ms")},
		Expect:     catalog.ThroughputShaperCap,
		UploadOnly: true,
	},
	{
		Name: "stale-endpoint-route", Case: caseMultiWAN,
		KernelLane: "the module sends from the kernel with a route cached per peer: the stale route must be found and its fix take there too",
		Symptom:    "tunnel crawls on the backup uplink while the fiber is up",
		Lab:        lab.Config{Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 200}, Backup: lab.Shape{RateMbit: 20}},
		// netifd's host route, created while the primary was down, never re-evaluated.
		BreaksUnderlay: true,
		Break:          []Command{on("a", "ip", "route", "add", "203.0.113.2", "via", "192.0.2.1", "dev", "eth1", "proto", "static", "metric", "20")},
		UplinkRoutes:   true,
		Expect:         catalog.RouteStaleEndpoint,
	},
	{
		Name: "slow-uplink", Case: caseMultiWAN,
		Symptom: "the tunnel keeps up with its underlay, and both crawl on the backup uplink",
		// A host route to the endpoint added by hand while the fiber was down
		// (proto boot, not the static one netifd makes): no passive check can
		// say it is stale, and the underlay measured to the endpoint follows
		// it too. Only the underlay through each uplink shows the fiber idle.
		Lab:            lab.Config{Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 200}, Backup: lab.Shape{RateMbit: 20}},
		BreaksUnderlay: true,
		Break:          []Command{on("a", "ip", "route", "add", "203.0.113.2", "via", "192.0.2.1", "dev", "eth1")},
		UplinkRoutes:   true,
		Expect:         catalog.RouteEndpointUplink,
	},
	{
		Name: "icmp-ratelimit", Case: caseMultiWAN,
		Symptom: "health-check pings fail now and then on a link with no loss",
		// A round trip like the multi-WAN router's uplinks (13 ms fiber, 25 ms
		// 5G) paces the one-shot loop as on the real uplink (~50 replies/s
		// at 20 ms: over 25/s, well under the fixed 250/s); with the lab's
		// sub-millisecond one, back-to-back pings outrun any limit. 10 ms
		// each way is the shape udp-rcvbuf and lossy-cubic run at: one
		// capacity measurement serves all four.
		// And a monitoring agent pings too (the case's telegraf): six echo
		// requests at once every second, whose replies overrun the limiter's
		// burst of 5 (its counter grows whoever looks, also where a slow
		// machine paces the one-shot checks below the limit) and leave no
		// budget for the health checks' replies that follow.
		Lab:     lab.Config{Underlay: lab.Shape{RateMbit: delayedRate, DelayMs: 10}, ICMPLimit: 25, BackgroundPings: 6},
		Probes:  []Probe{ProbeICMPBurst},
		Recheck: true,
		Expect:  catalog.ICMPRatelimitDrops,
	},
	{
		Name: "icmp-ratelimit-iptables", Case: caseMultiWAN,
		Symptom: "health-check pings fail now and then behind an iptables ping flood guard",
		// The same limit as icmp-ratelimit, written as hosts write it with
		// iptables: "-m limit --limit 25/sec -j ACCEPT", then "-j DROP". The
		// drops are the DROP rule's, and the fix raises the ACCEPT rule's limit.
		// The same monitoring agent pings beside the health checks.
		Lab: lab.Config{Underlay: lab.Shape{RateMbit: delayedRate, DelayMs: 10}, ICMPLimit: 25, ICMPLimitStyle: lab.ICMPLimitIptables,
			BackgroundPings: 6},
		Probes:  []Probe{ProbeICMPBurst},
		Recheck: true,
		Expect:  catalog.ICMPRatelimitDrops,
	},
	{
		Name: "lossy-cubic", Case: caseTuning,
		Symptom: "1% loss on a 20 ms path cuts CUBIC to a crawl",
		Lab:     lab.Config{Underlay: lab.Shape{RateMbit: delayedRate, LossPct: 1, DelayMs: 10}},
		// A child namespace may only pick algorithms the host allows.
		HostSysctls: map[string]string{"net.ipv4.tcp_allowed_congestion_control": "reno cubic bbr"},
		Break:       []Command{on("a", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic")},
		Expect:      catalog.TCPCongestionControl,
		// Only A's sender runs CUBIC; B sends with BBR before and after.
		UploadOnly: true,
	},
	{
		Name: "receive-backlog", Case: caseRemoteUsers,
		Symptom: "the tunnel falls short while the receiver's per-CPU backlog overflows",
		// The remote-users case raised the NAS's netdev_max_backlog from 1000
		// to 5000 with its buffers. Received packets wait in the per-CPU
		// backlog (a veth's always, a NIC's with RPS, a USB NIC's too); a
		// burst longer than the backlog loses its tail before WireGuard sees
		// it. R delivers in bursts here, as a NIC's interrupt does; the host's
		// backlog (child namespaces share it) is set short, and doctor's bench
		// counts the drops it causes. The bursts overflow so short a backlog
		// at any rate, and 100 Mbit/s leaves the fixed tunnel the CPU its
		// bursty receive needs on a busy machine: at 200, a run beside an
		// emulated guest carried 0.77 of the underlay after the fix, both
		// CPUs saturated (a healthy tunnel carried 890 there, unbursted).
		Lab:         lab.Config{Underlay: lab.Shape{RateMbit: 100}, Bursts: true},
		HostSysctls: map[string]string{"net.core.netdev_max_backlog": "8"},
		// The bursts are the senders' batches, shorter at a lower rate: with a
		// backlog of 8 the tunnel carried 0.67 at 100 Mbit/s, 0.81 at 50 and
		// 0.91 at 20 (doctor: healthy); 2 at 20 carried 0.68 and 0.70.
		RateScaled: []string{"net.core.netdev_max_backlog"},
		Expect:     catalog.NetBacklogDrops,
	},
	{
		Name: "wan-lossy-cubic", Case: caseTuning,
		KernelLane: "loss pins the module's single CUBIC stream below the underlay's own, which decides the verdict",
		Symptom:    "a real WAN (40 ms round trip, 2% loss): both the tunnel and the path crawl with CUBIC",
		// netem drops 2% of every packet both ways, as a lossy WAN does, and A
		// sends with CUBIC, a distro's default: the tunnel keeps up with the
		// underlay's own CUBIC transfer, so the ratio is healthy, yet both crawl.
		// Doctor names CUBIC as a latent cost; BBR takes the tunnel to what the
		// path carries with a good sender (the underlay measured before the
		// breakage, with BBR).
		Lab:            lab.Config{Underlay: lab.Shape{RateMbit: delayedRate, DelayMs: 20, PathLossPct: 2}},
		HostSysctls:    map[string]string{"net.ipv4.tcp_allowed_congestion_control": "reno cubic bbr"},
		BreaksUnderlay: true,
		Break:          []Command{on("a", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic")},
		Expect:         catalog.TCPCongestionControl,
		Latent:         true,
		UploadOnly:     true,
	},
	{
		Name: "conntrack-full", Case: caseTuning,
		Symptom: "new connections through the hub time out under many flows",
		Lab:     lab.Config{Underlay: lab.Shape{RateMbit: 200}},
		// nf_conntrack_max can only be set in the initial namespace.
		HostSysctls:    map[string]string{"net.netfilter.nf_conntrack_max": "256"},
		BreaksUnderlay: true, // the many flows fill the table: the underlay's own connections fail too
		Break:          []Command{on("b", "nft", "add table inet hub; add chain inet hub input { type filter hook input priority 0; ct state established,related accept; }")},
		Probes:         []Probe{ProbeFlows},
		Expect:         catalog.ConntrackTablePressure,
	},
	{
		Name: "mss-clamp-missing", Case: casePMTUD,
		Symptom: "LAN hosts stall through the gateway's tunnel; the gateway itself is fine",
		Lab:     lab.Config{Underlay: lab.Shape{RateMbit: 200}, LAN: true},
		// ICMP is blocked site-wide, down to the LAN hosts' own firewalls (which
		// wgperf does not reach), so they never learn the tunnel's MTU: only
		// the gateways' clamp helps.
		Break: []Command{
			on("lan", "nft", blockICMPErrors),
			on("lanb", "nft", blockICMPErrors),
		},
		Expect: catalog.MTUMSSClampMissing,
		Client: "lan", Server: "lanb",
	},
	{
		Name: "icmp-frag-blocked", Case: casePMTUD,
		Symptom: "LAN hosts stall through the tunnel: their gateways drop the ICMP that would tell them",
		Lab:     lab.Config{Underlay: lab.Shape{RateMbit: 200}, LAN: true},
		// Each gateway's own firewall drops the "fragmentation needed" it owes
		// the LAN hosts whose packets do not fit the tunnel: nft on A, the
		// classic iptables rule on B.
		Break: []Command{
			on("a", "nft", blockFragNeeded),
			on("b", "iptables", "-A", "OUTPUT", "-p", "icmp", "--icmp-type", "fragmentation-needed", "-j", "DROP"),
		},
		// The cure ranks before the workaround: letting the errors through, not the clamp.
		Expect: catalog.ICMPFragNeededDropped,
		Also:   []finding.ID{catalog.MTUMSSClampMissing},
		Client: "lan", Server: "lanb",
	},
	{
		Name: "ecmp", Case: caseECMP,
		Symptom: "one tunnel cannot use the second uplink",
		Lab:     lab.Config{Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 100}, Backup: lab.Shape{RateMbit: 100}},
		ECMP:    2, MinScaling: 1.7,
		// ecmpStreams flows filling one shaped uplink overflow its shaper: A's
		// tunnel sends more than B receives, a true symptom of the slow path.
		Also: []finding.ID{catalog.ThroughputAsymmetric},
	},
	{
		Name: "ecmp-bond", Case: caseECMP,
		KernelLane: "the bonding driver is the guest kernel's only: doctor must suggest ECMP over the bond with the rate parallel flows around the tunnel carried",
		Symptom:    "one tunnel over a bond of two links carries one link's worth",
		// The ECMP case after its hash change: A's LACP bond of two slaves,
		// each shaped at the underlay's rate, hashes layer3+4, so parallel
		// flows around the tunnel take both and the one tunnel one. Doctor
		// must propose ECMP with the rate to expect; fix ecmp's tunnels, on
		// ports the bond's hash sends by different slaves, must add them up.
		// Needs the bonding driver: played in lab vm.
		Lab:  lab.Config{BondSlaves: 2, Underlay: lab.Shape{RateMbit: 100}},
		ECMP: 2, MinScaling: 1.6,
		Expect: catalog.RouteECMPSuggested,
		// The slaves' shapers stand for 1G ports and hold the lab's deep
		// queue (lab.ShaperQueue), A's own for its uplink: a true finding,
		// not this case's.
		Also: []finding.ID{catalog.LatencyBufferbloat},
	},
	{
		Name: "bond-hash", Case: caseECMP,
		KernelLane: "the bonding driver is the guest kernel's only: the hash fix and its measurement by parallel flows can be played nowhere else",
		KernelFix:  true,
		Symptom:    "parallel flows over a bond of two links carry one link's worth",
		// The ECMP case before its hash change: A's LACP bond of two slaves
		// hashes on layer2, which ignores ports, so every flow between A and
		// R leaves by one slave. The tunnel is one flow under either hash, so
		// its ratio stays healthy (a latent cost doctor must still name); the
		// fix to layer3+4 is measured as the case measured it, by parallel
		// flows around the tunnel before and after (iperf3 -P 2: 947 Mbit/s
		// to 1.89 Gbit/s). Needs the bonding driver: played in lab vm.
		Lab:       lab.Config{BondSlaves: 2, BondHash: "layer2", Underlay: lab.Shape{RateMbit: 100}},
		Expect:    catalog.BondHashPolicy,
		Latent:    true,
		MinSpread: 1.5,
		// The slaves' shapers hold the lab's deep queue (lab.ShaperQueue).
		Also: []finding.ID{catalog.LatencyBufferbloat},
	},
	{
		Name: "bufferbloat", Case: caseTuning,
		Symptom: "the tunnel is fast, but every ssh keystroke and call stalls while a transfer runs",
		// A home uplink's deep FIFO: R shapes both ways at 20 Mbit/s with
		// tbf's 200 ms queue, and the senders run CUBIC, a distro's default,
		// which keeps any queue full (the lab's BBR would not: it paces at the
		// bottleneck's rate). 20 Mbit/s is slow enough for any machine to
		// fill it. The fix shapes each sender's uplink at 90% of the rate
		// with cake, which this machine's kernel does not have.
		Lab: lab.Config{Underlay: lab.Shape{RateMbit: 20}},
		// A child namespace may only pick CUBIC once the host allows it; the
		// senders switch after the lab is up (the capacity sizing ran BBR).
		HostSysctls: map[string]string{"net.ipv4.tcp_allowed_congestion_control": "reno cubic bbr"},
		Break: []Command{
			on("a", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"),
			on("b", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"),
		},
		Expect: catalog.LatencyBufferbloat,
		// CUBIC losing packets at the full queue's tail is a true finding too.
		Also:        []finding.ID{catalog.TCPCongestionControl},
		Unavailable: "cake/fq_codel not available on this kernel",
		// The shaper takes 10% of the measured rate and counts the bytes on
		// the wire, WireGuard's header in them: the tunnel's TCP then carries
		// about 0.9 x 0.92 of the underlay's (played on kernel WireGuard:
		// 15.5 Mbit/s through cake at 17 against 19.6, 0.79).
		Latency: true, MinRatio: 0.75,
	},
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range Catalog {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Names lists the catalog's scenario names.
func Names() []string {
	names := make([]string, len(Catalog))
	for i, s := range Catalog {
		names[i] = s.Name
	}
	return names
}
