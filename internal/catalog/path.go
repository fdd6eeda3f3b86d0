package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	PathHubLeg          ID = "path.hub-leg"
	PathPortThrottled   ID = "path.port-throttled"
	PathUDPPoliced      ID = "path.udp-policed"
	RouteECMPSuggested  ID = "route.ecmp-suggested"
	RouteEndpointUplink ID = "route.endpoint-uplink"
	RouteStaleEndpoint  ID = "route.stale-endpoint"
	RouteUplinkFlaps    ID = "route.uplink-flaps"
)

// pathEntries are the catalog's entries of one area (Entries, catalog.go):
// The path under the tunnel: policers, a hub's legs, routes and uplinks.
var pathEntries = []Entry{
	{
		ID:         PathHubLeg,
		Title:      "A tunnel through a hub is as slow as its slowest leg, and a leg past the hub is far slower than the client's own",
		Severities: []finding.Severity{finding.Warning},
		Why: `A road-warrior hub or a site that forwards between spokes is a second
underlay: every packet crosses both legs, so the hub's uplink towards the far
spoke caps the tunnel whatever either spoke's own link can do. No setting on
the spokes helps; the leg's link, or a path that leaves the hub out, does.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.8, Side: Both, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "the tunnel runs at the client's own leg's rate once the slow leg carries as much (or is left out)"},
	},
	{
		ID:         PathPortThrottled,
		Title:      "The path throttles WireGuard's UDP port: other UDP carries the rate, datagrams with its port number do not",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A carrier or firewall that recognises WireGuard by its well-known port can
throttle that port alone: every other UDP flow, and TCP, run at the link's
rate, so a plain UDP test says the path is fine while the tunnel crawls.
Moving the tunnel to another port takes it out of the rule.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: InBench, Verify: Measured, BothEnds: true,
			Bound: Bound{Key: "UDP arrived with port", As: RateHeld}},
	},
	{
		ID:         PathUDPPoliced,
		Title:      "The path polices UDP: the tunnel's packets are dropped above a rate TCP is not",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `WireGuard is nothing but UDP to the path. A policer that lets TCP through
at the link's rate but drops UDP above a lower one leaves the tunnel what it
allows, and TCP inside the tunnel backs off at every drop; a TCP-only baseline
outside the tunnel never sees it.`,
		Cases: []string{CaseTuning},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: InBench, Verify: Measured,
			Bound: Bound{Key: "UDP arrived", As: RateHeld}},
	},
	{
		ID:         RouteECMPSuggested,
		Title:      "One tunnel runs at one bond slave's rate, or is CPU- or flow-bound on a host with several uplinks or tunnels",
		Severities: []finding.Severity{finding.Info},
		Why: `One tunnel is one peer, one uplink and one flow hash: a CPU at its limit or a
per-flow cap holds it however much capacity the host has beside it: over a
bond, one slave's. Several tunnels with a multipath route over them add the
capacity up; over a bond, on ports its hash sends by different slaves (the
same port at both ends cancels in a layer3+4 hash: every tunnel on one slave
of 2 or 4).`,
		Cases:  []string{CaseECMP},
		Doctor: Doctor{Role: Environment, Impact: 0.05, Side: Both, Bench: InBench, Verify: Measured},
	},
	{
		ID:         RouteEndpointUplink,
		Title:      "The tunnel's endpoint is reached over a slower uplink than another one offers",
		Severities: []finding.Severity{finding.Critical},
		Why: `The tunnel runs at the rate of the uplink its endpoint's route takes. When
that is the slow one, the underlay measured beside the tunnel follows the same
route, so the tunnel seems to keep up with its link while a faster uplink sits
idle.`,
		Cases: []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: NotInBench, Verify: Measured,
			Gain: "the tunnel moves to the faster uplink: its rate instead of the slower one's " +
				"(the underlay bench to the endpoint follows the tunnel's own route, so it cannot show the difference)"},
	},
	{
		ID:         RouteStaleEndpoint,
		Title:      "Endpoint host route pinned to an uplink that is not the preferred one",
		Severities: []finding.Severity{finding.Critical},
		Why: `The tunnel runs over whatever uplink that host route names, so a stale one
keeps it on the slow backup long after the fast uplink is back, for months,
with nothing alerting.`,
		Cases: []string{CaseMultiWAN},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Both, Bench: NotInBench, Verify: Measured,
			Gain: "the tunnel moves to the preferred uplink: its rate instead of the backup's " +
				"(the underlay bench to the endpoint follows the same stale route, so it cannot show the difference)"},
	},
	{
		ID:         RouteUplinkFlaps,
		Title:      "mwan3 declared the preferred uplink offline, or its health checks keep failing",
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
	},
}
