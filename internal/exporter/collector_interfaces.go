package exporter

import "strconv"

// A WireGuard interface, its implementation and its MTU: the tunnel's own
// size, the first suspect when big packets vanish.
var (
	descIfaceInfo = desc("wireguard_interface_info", "A WireGuard interface; implementation is kernel, userspace or empty when unknown.",
		"interface", "public_key", "listen_port", "implementation")
	descIfaceMTU = desc("wireguard_interface_mtu_bytes", "MTU of the WireGuard interface.", "interface")
)

var interfacesCollector = collector{
	name:  "wireguard_interface",
	doc:   "Each WireGuard interface (wg show dump): its public key, listen port and implementation, and its MTU when known.",
	descs: []*Desc{descIfaceInfo, descIfaceMTU},
	emit: func(h hostFacts, e *emitter) {
		for _, w := range h.wireguard {
			e.gauge(descIfaceInfo, 1, w.Name, w.PublicKey, strconv.Itoa(w.ListenPort), w.Implementation)
			if w.MTU > 0 {
				e.gauge(descIfaceMTU, float64(w.MTU), w.Name)
			}
		}
	},
}
