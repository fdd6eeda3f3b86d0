package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	ICMPFragNeededDropped ID = "icmp.frag-needed-dropped"
	ICMPRatelimitDrops    ID = "icmp.ratelimit-drops"
	MTUMSSClampIPv6       ID = "mtu.mss-clamp-ipv6"
	MTUMSSClampMissing    ID = "mtu.mss-clamp-missing"
	MTUPMTUDBlackhole     ID = "mtu.pmtud-blackhole"
	MTUTunnelTooLarge     ID = "mtu.tunnel-too-large"
	MTUTunnelTooSmall     ID = "mtu.tunnel-too-small"
)

// mtuEntries are the catalog's entries of one area (Entries, catalog.go):
// Packet sizes: the tunnel MTU, PMTUD black holes, MSS clamps, and the ICMP they depend on.
var mtuEntries = []Entry{
	{
		ID:         ICMPFragNeededDropped,
		Title:      "A firewall rule drops the ICMP errors path MTU discovery needs",
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
	},
	{
		ID:         ICMPRatelimitDrops,
		Title:      "An ICMP rate-limit rule has dropped packets on an uplink",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Health checks (mwan3, keepalived, monitoring) send short bursts of pings. A
limiter that drops their replies makes a good uplink look dead, so failover
moves the traffic, and the tunnel's endpoint route with it, onto the slow
backup.`,
		Cases:  []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Gain: costsThroughFailures, Verify: ConfirmOnly},
	},
	{
		ID:         MTUMSSClampIPv6,
		Title:      "A fixed MSS clamp is too large for IPv6 inside the tunnel",
		Severities: []finding.Severity{finding.Warning},
		Why: `IPv6 headers take 20 bytes more than IPv4's, so the MSS that fits a tunnel is
its MTU - 40 for IPv4 but MTU - 60 for IPv6. A clamp fixed at the IPv4 value
lets full-size IPv6 segments through that the tunnel cannot carry, and IPv6 is
never fragmented on the way: IPv6 transfers stall wherever "packet too big"
does not get back, while IPv4 works and hides the fault.`,
		Cases: []string{CasePMTUD, CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.7, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "IPv6 hosts behind the gateways get bulk TCP through the tunnel again (a bench over IPv4 cannot show it)"},
	},
	{
		ID:         MTUMSSClampMissing,
		Title:      "Forwarded TCP enters a smaller-MTU tunnel without MSS clamping",
		Severities: []finding.Severity{finding.Warning},
		Why: `Hosts behind the gateway choose their TCP segment size from their own LAN
MTU. Without a clamp their full-size segments do not fit the tunnel, and they
depend on ICMP "fragmentation needed" getting back to them: where it is
blocked, transfers stall right after the handshake.`,
		Cases: []string{CasePMTUD, CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.7, Side: Both, Bench: NotInBench, Verify: ConfirmOnly, Calls: ProbeMTU,
			Gain: "hosts behind the gateways get bulk TCP through the tunnel again " +
				"(the gateways' own bench cannot show it: their connections already fit the tunnel's MTU)"},
	},
	{
		ID:         MTUPMTUDBlackhole,
		Title:      "PMTUD black hole: large packets vanish and no ICMP says why",
		Severities: []finding.Severity{finding.Info, finding.Critical},
		Why: `Small packets (ssh, pings, TCP handshakes) pass, so the tunnel looks up, but
every full-size packet vanishes: bulk transfers stall or crawl, often in one
direction only, and nothing reports an error.`,
		Cases:  []string{CasePMTUD},
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: InBench, Verify: Measured, Calls: ProbeMTU},
	},
	{
		ID:         MTUTunnelTooLarge,
		Title:      "WireGuard MTU larger than the underlay allows",
		Severities: []finding.Severity{finding.Info, finding.Warning, finding.Critical},
		Why: `Every full-size packet the tunnel sends is too big for the link under it, so
it is fragmented (two packets for one, and losing either loses both) or
dropped; throughput falls to a fraction of the link.`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.8, Side: Both, Bench: InBench, Verify: Measured, Calls: ProbeMTU},
	},
	{
		ID:         MTUTunnelTooSmall,
		Title:      "WireGuard MTU far below what the underlay allows",
		Severities: []finding.Severity{finding.Info, finding.Warning},
		Why: `Every tunnel packet pays the same headers and the same per-packet work
(encryption, interrupts, a trip through a userspace process), so a tunnel MTU
far below what fits sends more packets for the same data: "1280 to be safe"
on a 1500-byte path costs about a tenth of a packet-rate-bound tunnel's
throughput, for no benefit.`,
		Cases:  []string{CaseRemoteUsers, CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.1, Side: Both, Bench: InBench, Verify: Measured, Calls: ProbeMTU},
	},
}
