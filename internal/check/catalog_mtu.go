package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// mtuEntries add to internal/catalog/mtu.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// Packet sizes: the tunnel MTU, PMTUD black holes, MSS clamps, and the ICMP they depend on.
var mtuEntries = []Entry{
	{
		ID:    catalog.ICMPFragNeededDropped,
		Check: &icmpFragNeededDropped,
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
		ID:    catalog.ICMPRatelimitDrops,
		Check: &icmpRateLimitDrops,
		Probes: []Source{{Kind: "probe", Name: "wgperf icmp-burst (and doctor, where health checks ping)",
			Doc: `Pings the health checks' targets as their checkers do, each ping its own
process (20 per target), then with one persistent ping of as many packets, and
reads the firewall's counters before and after. One-shot pings that fail at
twice the persistent ping's rate plus 5 points or more mean a limiter drops
reply bursts, and the counter that grew names its rule: the health checks'
replies are what the limit eats, which the check can only suspect.`}},
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
		ID:    catalog.MTUMSSClampIPv6,
		Check: &mssClampIPv6,
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
		ID:    catalog.MTUMSSClampMissing,
		Check: &mssClampMissing,
		Remedies: []Remedy{
			{Kind: remedy.KindMSSClamp, Params: map[string]Values{"oif": Named("the WireGuard interface a LAN forwards into").On(forwardsInto), "mss": OneOf("pmtu")}},
		},
		Example: Example{
			Host:  "the host forwards its LAN (MTU 1500) into wg0 (MTU 1420)",
			Fixes: func() []finding.Fix { return mssClampFix(exampleHost, "wg0") },
		},
	},
	{
		ID: catalog.MTUPMTUDBlackhole,
		Probes: []Source{{Kind: "probe", Name: "wgperf mtu (and doctor, lab run)", Doc: `Sends don't-fragment probes towards the peer's endpoint
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
		ID:    catalog.MTUTunnelTooLarge,
		Check: &tunnelTooLarge,
		Cross: &crossMTU,
		Probes: []Source{{Kind: "probe", Name: "wgperf mtu (and doctor)", Doc: `When the DF probes find the path MTU (the
narrow hop answers with "fragmentation needed") and TCP through the tunnel still
collapses above an MSS, the tunnel's packets do not fit a hop its ends cannot see:
refused with DF set (userspace WireGuard), or fragmented and the fragments lost
(kernel WireGuard, on a path that drops fragments).`}},
		Remedies: []Remedy{wgMTU},
		Example: Example{
			Host: "wg0 has MTU 1500 and its IPv4 endpoint is reached over eth0 (MTU 1500): 1500 - 60 = 1440 fits",
			Fixes: func() []finding.Fix {
				return wgMTUFix(exampleHost, "wg0", 1440, "Lower wg0's MTU to 1440 (on both ends of the tunnel)")
			},
		},
	},
	{
		ID:    catalog.MTUTunnelTooSmall,
		Check: &tunnelTooSmall,
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
}
