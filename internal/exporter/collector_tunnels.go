package exporter

// How many WireGuard interfaces and peers the host has, emitted also when
// there are none: a host whose tunnel is gone (wg-quick down, the interface
// deleted) serves no per-interface or per-peer series at all, so an alert on
// those resolves instead of firing; these counts go to 0 and say so.
var (
	descInterfaces = desc("wireguard_interfaces", "WireGuard interfaces on the host (0 when it has none: its tunnels are gone).")
	descPeers      = desc("wireguard_peers", "WireGuard peers of all the host's interfaces (0 when it has none).")
)

var tunnelsCollector = collector{
	name: "wireguard_tunnels",
	doc: "How many WireGuard interfaces and peers the host has (wg show dump), also when none: absence is a signal, " +
		"since a tunnel that disappears takes its per-interface and per-peer series with it.",
	descs: []*Desc{descInterfaces, descPeers},
	emit: func(h hostFacts, e *emitter) {
		peers := 0
		for _, w := range h.wireguard {
			peers += len(w.Peers)
		}
		e.gauge(descInterfaces, float64(len(h.wireguard)))
		e.gauge(descPeers, float64(peers))
	},
}
