package check

import (
	"strconv"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// wgEntries are the catalog's entries of one area (Catalog, catalog.go):
// WireGuard itself: handshakes, keys, NAT, AllowedIPs, implementations.
var wgEntries = []Entry{
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
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (peer endpoints sampled through the bench)", Package: "internal/probe/roaming", Doc: `While its bench runs, doctor reads both ends' WireGuard peers every 2 seconds (less often where a read is slow: a tenth of the time at most)
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
