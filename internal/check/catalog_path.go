package check

import (
	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// pathEntries add to internal/catalog/path.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// The path under the tunnel: policers, a hub's legs, routes and uplinks.
var pathEntries = []Entry{
	{
		ID: catalog.PathHubLeg,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor --via", Doc: `With the hubs given (--via), doctor measures each leg's own underlay
(client → hub, hub → server), single stream both ways. When a leg past the
first carries under 80% of the client's own leg in a direction, that leg is
the path's limit: the tunnel, judged against it, may be healthy while it runs
far below the client's link. Warning, on the host that starts the leg (the
hub); the fixes are the leg's owner's: its link, or a direct peer between the
two ends that leaves the hub out.`}},
		Example: Example{
			Host: "hop 2 (the hub → the server) carries 9.5 Mbit/s where hop 1 (the client → the hub) carries 38.3; the tunnel carries 9.2",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{Description: "Raise the slow leg's link (between the hub and the server), or peer the two ends directly",
					Commands: []string{"iperf3 -s   # on the server", "iperf3 -c 203.0.113.2 -t 30   # on the hub"}}}
			},
		},
	},
	{
		ID: catalog.PathPortThrottled,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (UDP outside the tunnel)", Doc: `With the UDP run on a port of its own, doctor offers
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
		// The far end's half, then the near end's.
		Remedies: []Remedy{
			{Kind: remedy.KindWGListenPort, Params: map[string]Values{"interface": wgInterface, "port": Between(1, 65535).On(movesListenPort), "uci_section": uciSectionParam}},
			{Kind: remedy.KindWGPeerEndpoint, Params: map[string]Values{"interface": wgInterface,
				"peer":     Named("the far end's public key, a peer of the interface").On(peerOfInterface),
				"endpoint": Named("the far end's address at the port after its port now").On(movesEndpoint)}},
			// The near end's half where it listens on the throttled port too.
			{Kind: remedy.KindWGPortMove, Params: map[string]Values{"interface": wgInterface, "port": Between(1, 65535).On(movesListenPort),
				"peer":        Named("the far end's public key, a peer of the interface").On(peerOfInterface),
				"endpoint":    Named("the far end's address at the port after its port now").On(movesEndpoint),
				"uci_section": uciSectionParam}},
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
		ID: catalog.PathUDPPoliced,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (UDP outside the tunnel)", Doc: `When the tunnel is slow in a direction and nothing found so far
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
		ID: catalog.RouteECMPSuggested,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Doc: `After its bench, for each end whose tunnel leaves by
a bond that hashes flows (802.3ad, balance-xor, -tlb, -alb) of several slaves
and runs at one slave's rate (at least 70% of the TCP one slave's speed lets
through a tunnel, or the parallel streams around the tunnel carried 1.5 times
what they carried through it: where its quick bench ran one stream, doctor
runs 4 upload streams through the tunnel and around it, since one flow rides
one slave either way), suggests as many tunnels as the bond has
slaves, with the rate to expect: the tunnel's times their number, bounded by
the bond's speed or the streams around it (the ECMP case's central move: one
tunnel over a 3×1G bond carried 874-893 Mbit/s, two 1.56 Gbit/s). Else, for
each end whose tunnel was bound
to one CPU (cpu.saturated during a tunnel run) or to one flow (with several
streams measured, one stream below 60% of them), and that has more than one
default route's uplink or WireGuard interface, suggests spreading the flows
over several tunnels behind a multipath route, as the ECMP case did (874
Mbit/s through one tunnel, 1.56 Gbit/s through two). A note: the suggestion
is where the capacity is; wgperf fix ecmp --server plans and applies the
tunnels on both ends.`},
			{Kind: "probe", Name: "wgperf fix ecmp --server", Doc: `Plans the change on both ends of a
tunnel under this finding, one on each end: its fix is that end's half of
the ECMP change (ecmp-tunnels), naming the public keys the other end's new
tunnels will have.`}},
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
		ID: catalog.RouteEndpointUplink,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor (the tunnel and the underlay over each uplink)", Doc: `On a host with more than one default route (multi-WAN),
doctor measures each uplink the endpoint's route does not take: the tunnel
itself, with a host route sending its endpoint through that uplink for the
run (journaled as fixes are, removed after it or by its watchdog), and TCP to
the far end's endpoint through it (iperf3 --bind-dev), beside the bench's
runs, which follow the tunnel's own route. Another uplink carrying twice as
much through the tunnel (raw TCP where the tunnel could not be measured)
means the tunnel rides the slow one, whatever put it there (a host route
added by hand, a policy rule, a failover policy that never fails back),
which no passive check can judge. Raw TCP alone can rank the uplinks the
wrong way: the case's 5G carried 273 Mbit/s of raw TCP and 1.7 through
WireGuard, the fiber's tunnel 63. Each uplink's idle round trip and hops
(a carrier's NAT in 100.64/10 named) are shown beside. The case: a router's
tunnel ran over the 5G backup for two months while the fiber was up. Fix:
route the endpoint through the faster uplink.`}},
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
		ID:    catalog.RouteStaleEndpoint,
		Check: &staleEndpoint,
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
		ID:    catalog.RouteUplinkFlaps,
		Check: &uplinkFlaps,
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
}
