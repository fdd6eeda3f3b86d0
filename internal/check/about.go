package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
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

// about is what the catalog says of an ID beyond its checks' and probes'
// docs: why it matters, the cases it comes from and an example of its fix,
// built by the same constructors the checks use, for a host described in
// example.
type about struct {
	why     string
	cases   []string
	example string
	fixes   func() []finding.Fix
}

// exampleHost is the host the example fixes are written for: a Linux host
// (not OpenWrt), whose remedies are the plain ones.
var exampleHost = &facts.Snapshot{}

const (
	exampleEndpoint = "203.0.113.2"
	exampleGateway  = "192.0.2.1"
)

var abouts = map[string]about{
	idBondHashPolicy: {
		why: `A bond adds capacity only for traffic its hash spreads over the links. A
WireGuard tunnel is one address pair, so with layer2 hashing it never gets more
than one link's speed, however many links the bond has.`,
		cases:   []string{CaseECMP},
		example: "bond0 is an 802.3ad bond hashing on layer2",
		fixes:   func() []finding.Fix { return bondHashFix(exampleHost, "bond0") },
	},
	idConntrackTablePressure: {
		why: `A full table makes the kernel refuse new flows or evict live ones: new
connections through the tunnel time out while the old ones keep working, which
looks like an intermittent network fault.`,
		cases:   []string{CaseTuning},
		example: "nf_conntrack_max is 65536, and wg0 (UDP port 51820) is tracked although no NAT rule needs it",
		fixes: func() []finding.Fix {
			return append(sysctlFix("Raise nf_conntrack_max from 65536 to 262144 (set in the initial network namespace)",
				"net.netfilter.nf_conntrack_max", "262144"), notrackFix(exampleHost, exampleWG)...)
		},
	},
	idConntrackTunnelTracked: {
		why: `Tracking costs a table entry and per-packet work for every flow in the
tunnel. On a busy hub that is CPU time and table space spent for nothing, and it
brings the table closer to full (conntrack.table-pressure).`,
		cases:   []string{CaseTuning},
		example: "wg0 listens on UDP port 51820 and no NAT rule matches it",
		fixes:   func() []finding.Fix { return notrackFix(exampleHost, exampleWG) },
	},
	finding.CPUSaturated: {
		why: `When a CPU is the ceiling, no network tuning makes the tunnel faster: the
other findings' gains are capped by it. The way out is spreading the work or a
faster WireGuard implementation.`,
		cases:   []string{CaseTuning},
		example: "a 4-CPU host whose receive processing for eth0 runs on one CPU",
		fixes: func() []finding.Fix {
			return append([]finding.Fix{{
				Description: "See what keeps the CPU busy (the WireGuard process, softirq, another program) during a transfer",
				Commands:    []string{"top -b -n 1 -H | head -20", "cat /proc/net/softnet_stat"},
			}}, rpsFix(exampleHost, "eth0", cpuMask(4))...)
		},
	},
	idCPUSoftirqImbalance: {
		why: `Receive processing for the whole tunnel runs on one CPU. When that CPU
saturates, its backlog overflows, packets are dropped and TCP backs off, so
throughput oscillates while the other CPUs idle.`,
		cases:   []string{CaseRemoteUsers},
		example: "a 4-CPU host whose uplink eth0 has no RPS mask",
		fixes:   func() []finding.Fix { return rpsFix(exampleHost, "eth0", cpuMask(4)) },
	},
	finding.ICMPRatelimitDrops: {
		why: `Health checks (mwan3, keepalived, monitoring) send short bursts of pings. A
limiter that drops their replies makes a good uplink look dead, so failover
moves the traffic, and the tunnel's endpoint route with it, onto the slow
backup.`,
		cases:   []string{CaseMultiWAN},
		example: `the nft rule "icmp type echo-reply limit rate 25/second burst 5 packets accept" (handle 42 in inet fw4 input_wan) lets the excess fall through to a drop; or banIP's ICMP limit on OpenWrt`,
		fixes: func() []finding.Fix {
			rule := facts.FirewallRule{Backend: "nft", Family: "inet", Table: "fw4", Chain: "input_wan", Handle: 42,
				Text: "icmp type echo-reply limit rate 25/second burst 5 packets accept"}
			out := raiseFixes(exampleHost, rule)
			rem, err := remedy.BanIPLimit(icmpLimitRaised)
			return append(out, fixes(fmt.Sprintf("Raise banIP's ICMP limit to %d/second", icmpLimitRaised), rem, err)...)
		},
	},
	idMTUMSSClampMissing: {
		why: `Hosts behind the gateway choose their TCP segment size from their own LAN
MTU. Without a clamp their full-size segments do not fit the tunnel, and they
depend on ICMP "fragmentation needed" getting back to them: where it is
blocked, transfers stall right after the handshake.`,
		cases:   []string{CasePMTUD, CaseTuning},
		example: "the host forwards its LAN (MTU 1500) into wg0 (MTU 1420)",
		fixes:   func() []finding.Fix { return mssClampFix(exampleHost, "wg0") },
	},
	finding.MTUPMTUDBlackhole: {
		why: `Small packets (ssh, pings, TCP handshakes) pass, so the tunnel looks up, but
every full-size packet vanishes: bulk transfers stall or crawl, often in one
direction only, and nothing reports an error.`,
		cases:   []string{CasePMTUD},
		example: "the path to the peer carries 1400-byte packets and drops larger ones without a word",
		fixes: func() []finding.Fix {
			return append(wgMTUFix(exampleHost, "wg0", 1340, "Set the WireGuard MTU to 1340 on both ends"), mssClampFix(exampleHost, "wg0")...)
		},
	},
	finding.MTUTunnelTooLarge: {
		why: `Every full-size packet the tunnel sends is too big for the link under it, so
it is fragmented (two packets for one, and losing either loses both) or
dropped; throughput falls to a fraction of the link.`,
		cases:   []string{CaseRemoteUsers, CaseTuning},
		example: "wg0 has MTU 1500 and its IPv4 endpoint is reached over eth0 (MTU 1500): 1500 - 60 = 1440 fits",
		fixes: func() []finding.Fix {
			return wgMTUFix(exampleHost, "wg0", 1440, "Lower wg0's MTU to 1440 (on both ends of the tunnel)")
		},
	},
	idNetBacklogDrops: {
		why: `These packets are dropped before any protocol sees them: WireGuard's
datagrams lost on the receiving host, which TCP inside the tunnel reads as
congestion and backs off from.`,
		cases:   []string{CaseTuning, CaseRemoteUsers},
		example: "net.core.netdev_max_backlog is 1000, the default",
		fixes: func() []finding.Fix {
			return sysctlFix(fmt.Sprintf("Raise net.core.netdev_max_backlog to %d", backlogTarget), "net.core.netdev_max_backlog", itoa(backlogTarget))
		},
	},
	idRouteStaleEndpoint: {
		why: `The tunnel runs over whatever uplink that host route names, so a stale one
keeps it on the slow backup long after the fast uplink is back, for months,
with nothing alerting.`,
		cases:   []string{CaseMultiWAN},
		example: "the endpoint " + exampleEndpoint + " is pinned via " + exampleGateway + " dev eth1 (the backup) while eth0 is the preferred uplink; on OpenWrt, the WireGuard interface wg0",
		fixes: func() []finding.Fix {
			r, err := remedy.RouteDel(exampleEndpoint, remedy.Route{Dst: exampleEndpoint, Via: exampleGateway, Dev: "eth1"})
			out := fixes("Delete the stale host route so the endpoint follows the preferred default route", r, err)
			r, err = remedy.NoHostRoute(exampleEndpoint, "wg0")
			return append(out, fixes("On OpenWrt: stop netifd pinning a host route to the endpoint (split tunnel)", r, err)...)
		},
	},
	idTCPBuffersSmall: {
		why: `TCP cannot have more data in flight than its buffer, so one connection tops
out at buffer / round-trip time: 4 MiB over 50 ms is about 670 Mbit/s, however
fast the tunnel is.`,
		cases:   []string{CaseTuning},
		example: fmt.Sprintf("net.ipv4.tcp_rmem is \"4096 131072 1048576\" and the path is %s", Options{}.pathDescription()),
		fixes: func() []finding.Fix {
			want := tcpBufferWant(Options{}.bdpBytes())
			return sysctlFix(fmt.Sprintf("Raise the receive buffer maximum to %s", mib(want)), "net.ipv4.tcp_rmem", fmt.Sprintf("4096 131072 %d", want))
		},
	},
	finding.TCPCongestionControl: {
		why: `CUBIC and Reno halve their window at every loss and grow it back slowly.
Through a tunnel with a little loss the window never gets large, so a long path
carries a fraction of what it could.`,
		cases:   []string{CaseTuning, CaseRemoteUsers},
		example: "a Linux 6.1 sender using cubic, with tcp_bbr available",
		fixes: func() []finding.Fix {
			r, err := remedy.Congestion("bbr", false, "6.1.0")
			return fixes("Switch TCP congestion control to BBR", r, err)
		},
	},
	finding.ThroughputAsymmetric: {
		why: `Loss in one direction only points at that direction's path or receiver: a
hop whose ICMP is blocked, a receiver dropping UDP. The slow direction is often
the one users notice (uploads, backups).`,
		cases:   []string{CaseMultiWAN, CasePMTUD, CaseRemoteUsers},
		example: "ssh:root@site-a sends to ssh:root@site-b and loses 5%",
		fixes:   func() []finding.Fix { return []finding.Fix{deliveryFix("ssh:root@site-a", "ssh:root@site-b")} },
	},
	finding.ThroughputOscillation: {
		why: `A sawtooth of collapse and recovery averages well below the link, and users
see stalls every few seconds. A steady rate a little below the peak moves more
data.`,
		cases:   []string{CaseRemoteUsers},
		example: "wg0 on the sender collapses above about 220 Mbit/s",
		fixes: func() []finding.Fix {
			r, err := remedy.TBF("wg0", "200mbit")
			return append([]finding.Fix{{
				Description: "Find the most stable rate cap on the sender's tunnel interface",
				Commands:    []string{"wgperf shape-sweep --client ssh:root@site-a --server ssh:root@site-b"},
			}}, fixes("Cap wg0 at 200 Mbit/s, below the collapse", r, err)...)
		},
	},
	finding.ThroughputTunnelRatio: {
		why: `It is the symptom people notice: the tunnel is slower than the link under it.
It names no cause by itself; the other findings on the same hosts, ranked by
wgperf doctor, say which one costs the throughput.`,
		cases:   []string{CaseTuning},
		example: "the tunnel from ssh:root@site-a to ssh:root@site-b carries 40% of the underlay",
		fixes: func() []finding.Fix {
			return []finding.Fix{{
				Description: "Rank the causes on both ends",
				Commands:    []string{"wgperf doctor --client ssh:root@site-a --server ssh:root@site-b"},
			}}
		},
	},
	finding.UDPRcvbufErrors: {
		why: `Each drop is a WireGuard packet lost before it is decrypted. TCP inside the
tunnel takes it for congestion and slows down, so a small socket buffer caps the
tunnel far below the link.`,
		cases:   []string{CaseRemoteUsers},
		example: "net.core.rmem_max and rmem_default are 212992 (208 KiB)",
		fixes: func() []finding.Fix {
			var out []finding.Fix
			for _, k := range []string{"net.core.rmem_max", "net.core.rmem_default"} {
				out = append(out, sysctlFix(fmt.Sprintf("Raise %s from %s to %s", k, mib(212992), mib(udpBufferTarget)), k, itoa(udpBufferTarget))...)
			}
			return out
		},
	},
	idWGHandshakeStale: {
		why: `Without a handshake in the last 3 minutes WireGuard has no valid session:
nothing passes through the tunnel to that peer until one completes.`,
		example: "peer " + exampleEndpoint + ":51820 of wg0 has not completed a handshake",
		fixes:   func() []finding.Fix { return []finding.Fix{handshakeFix("wg0", exampleEndpoint+":51820")} },
	},
	idWGUserspace: {
		why: `Every packet crosses between the kernel and a process, so the tunnel's
ceiling is that process's CPU; the same hardware carries more with the kernel
module.`,
		cases:   []string{CaseRemoteUsers},
		example: "wg0 is served by wireguard-go on a Linux 6.1 host",
		fixes:   func() []finding.Fix { return []finding.Fix{userspaceFix("wg0")} },
	},
}

var exampleWG = facts.WGInterface{Name: "wg0", ListenPort: 51820}
