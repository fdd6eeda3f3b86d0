package check

import (
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// wgEntries add to internal/catalog/wg.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// WireGuard itself: handshakes, keys, NAT, AllowedIPs, implementations.
var wgEntries = []Entry{
	{
		ID:    catalog.WGAllowedIPsMismatch,
		Check: &wgAllowedIPsMismatch,
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
		ID:    catalog.WGHandshakeStale,
		Check: &wgHandshakeStale,
		Cross: &crossHandshake,
		Example: Example{
			Host:  "peer " + exampleEndpoint + ":51820 of wg0 has not completed a handshake",
			Fixes: func() []finding.Fix { return []finding.Fix{handshakeFix("wg0", exampleEndpoint+":51820")} },
		},
	},
	{
		ID:    catalog.WGNATNoKeepalive,
		Cross: &crossNATKeepalive,
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
		ID: catalog.WGSharedKey,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (peer endpoints sampled through the bench)", Doc: `While its bench runs, doctor reads both ends' WireGuard peers every 2 seconds (less often where a read is slow: a tenth of the time at most)
("wg show all dump"): the endpoint each holds for each key, and its latest
handshake. A key whose endpoint switches back and forth between the same
addresses (three switches, two of them returns: X → Y → X → Y) is held by two
devices: a device that roams moves on, it does not keep coming back. Critical:
each device pulls the replies meant for the other and their handshakes
replace each other's sessions. The fix is by hand: a key of its own for one
of them, added here as a peer of its own.`}},
		Example: Example{
			Host: "the far end's endpoint for this key switched 6 times in 20 s between 198.51.100.2:51820 and 198.18.0.2:51820",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "Give one of the two devices a key of its own, and add its new public key here as another peer",
					Commands: []string{"wg genkey | tee private.key | wg pubkey", "wg show wg0 endpoints"}}}
			},
		},
	},
	{
		ID: catalog.WGSpecificCollapse,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (UDP outside the tunnel)", Doc: `When the tunnel carries less than half of what UDP
outside it delivered at the same rate, on a port of its own and with
WireGuard's port number alike, no
policer or port throttle explains it: something treats WireGuard's packets
apart (their size or fragments, their handshake, the implementation at
either end). The multi-WAN router's 5G epilogue: raw UDP over 5G carried 300
Mbit/s with 0.18% loss, port and throttling were ruled out, and WireGuard ran
at 1.7 Mbit/s. Warning; the fixes are the next measurements.`}},
		Example: Example{
			Host: "the tunnel carries 1.7 Mbit/s where UDP outside it delivered 300 of 300 offered on its own port and on WireGuard's",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "Capture the tunnel's packets on both ends during a transfer and compare what left with what arrived (sizes, fragments)",
					Commands: []string{"tcpdump -ni eth0 -c 2000 -w wg.pcap udp port 51820"}}}
			},
		},
	},
	{
		ID:    catalog.WGUserspace,
		Check: &wgUserspace,
		Example: Example{
			Host:  "wg0 is served by wireguard-go on a Linux 6.1 host",
			Fixes: func() []finding.Fix { return []finding.Fix{userspaceFix("wg0")} },
		},
	},
}
