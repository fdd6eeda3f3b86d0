package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	WGAllowedIPsMismatch ID = "wg.allowedips-mismatch"
	WGHandshakeStale     ID = "wg.handshake-stale"
	WGNATNoKeepalive     ID = "wg.nat-no-keepalive"
	WGSharedKey          ID = "wg.shared-key"
	WGSpecificCollapse   ID = "wg.specific-collapse"
	WGUserspace          ID = "wg.userspace"
)

// wgEntries are the catalog's entries of one area (Entries, catalog.go):
// WireGuard itself: handshakes, keys, NAT, AllowedIPs, implementations.
var wgEntries = []Entry{
	{
		ID:         WGAllowedIPsMismatch,
		Title:      "Kernel WireGuard dropped packets its peers' AllowedIPs do not cover",
		Severities: []finding.Severity{finding.Warning},
		Why: `WireGuard accepts a peer's packet only from the addresses that peer's
AllowedIPs list, and sends a packet only to a peer whose AllowedIPs cover its
destination. When the two ends disagree, say a LAN routed into the tunnel on
one side and missing from the other side's AllowedIPs, that traffic silently
never arrives while the tunnel's own addresses work.`,
		Cases: []string{CasePMTUD, CaseECMP},
		Doctor: Doctor{Role: Cause, Impact: 0.3, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "traffic between the networks the ends' AllowedIPs disagree on gets through (the bench between the tunnel's own addresses cannot show it)"},
	},
	{
		ID:         WGHandshakeStale,
		Title:      "Peer's latest handshake is old or missing",
		Severities: []finding.Severity{finding.Info, finding.Warning, finding.Critical},
		Why: `Without a handshake in the last 3 minutes WireGuard has no valid session:
nothing passes through the tunnel to that peer until one completes.`,
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: InBench, Verify: Measured},
	},
	{
		ID:         WGNATNoKeepalive,
		Title:      "A tunnel end behind NAT sends no keepalive: the far end cannot reach it once the NAT forgets the mapping",
		Severities: []finding.Severity{finding.Warning},
		Why: `A NAT keeps a UDP mapping only while packets use it. WireGuard sends nothing
on an idle tunnel, so the mapping expires, and the far end's packets, sent to
the endpoint it learned, find nothing behind it: a road warrior or branch
behind a home router can reach the hub, but the hub (or the other site) cannot
reach it until it sends again. Health checks, monitoring and anything started
from the far side fail while the tunnel looks up from the NATed side.`,
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "the far end reaches this end through the tunnel at any time, not only while this end's own traffic keeps the NAT's mapping open"},
	},
	{
		ID:         WGSharedKey,
		Title:      "Two devices hold the same WireGuard key: the far end's endpoint for it takes turns between them",
		Severities: []finding.Severity{finding.Critical},
		Why: `A cloned VM or a config copied to a second laptop brings its private key
along. WireGuard accepts both devices as the one peer and sends everything to
whichever spoke last, so each steals the other's traffic and sessions: the
tunnel works in bursts or not at all, and every end looks configured right.`,
		// A bench may cross between the turns: its ratio does not show the cost.
		Doctor: Doctor{Role: Cause, Impact: 1.0, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "each device gets its own session and its own replies: the tunnel stops failing in bursts"},
	},
	{
		ID:         WGSpecificCollapse,
		Title:      "The tunnel collapses where UDP outside it does not: the cause is WireGuard's own, not the path's UDP",
		Severities: []finding.Severity{finding.Warning},
		Why: `A collapse no UDP test outside the tunnel reproduces is not the path
dropping UDP: blaming a policer sends the user to the carrier for nothing.
What is left is what makes WireGuard's packets different, and that needs
capturing on both ends rather than more throughput tests.`,
		Cases:  []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.5, Side: Both, Bench: InBench, Verify: Measured},
	},
	{
		ID:         WGUserspace,
		Title:      "WireGuard served by a userspace implementation",
		Severities: []finding.Severity{finding.Info},
		Why: `Every packet crosses between the kernel and a process, so the tunnel's
ceiling is that process's CPU; the same hardware carries more with the kernel
module.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.05, Side: Both, Bench: InBench, Verify: Measured, Load: "a userspace WireGuard implementation (its CPU is the ceiling)"},
	},
}
