package exporter

// Where a WireGuard peer is reached: the address a multi-WAN router's stale
// endpoint route sends to the wrong uplink.
var (
	descPeerAddr = desc("wireguard_peer_endpoint_info", "The address of the peer's current endpoint, or \"roaming\" once it has shown 4 addresses within an hour; absent when it has none.", "interface", "peer", "endpoint_ip")
	descPeerPort = desc("wireguard_peer_endpoint_port", "UDP port of the peer's current endpoint (a value, not a label: NAT rebinding changes it often).", "interface", "peer")
)

var endpointsCollector = collector{
	name: "wireguard_endpoint",
	doc: "Each WireGuard peer's current endpoint (wg show dump): its address as a label, bounded by the roaming limit, " +
		"and its port as a value, so NAT rebinding makes no new series.",
	descs: []*Desc{descPeerAddr, descPeerPort},
	emit:  emitEndpoints,
}

func emitEndpoints(h hostFacts, e *emitter) {
	roam := h.labels.roam // per watched host; nil shows every address
	if roam != nil {
		roam.mu.Lock()
		defer roam.mu.Unlock()
	}
	present := map[[2]string]bool{}
	for _, w := range h.wireguard {
		for _, p := range h.peers(w) {
			present[[2]string{w.Name, p.PublicKey}] = true
			addr, port := splitEndpoint(p.Endpoint)
			if addr == "" {
				continue
			}
			if roam != nil {
				addr = roam.label(w.Name, p.PublicKey, addr, h.snap.CollectedAt)
			}
			e.gauge(descPeerAddr, 1, w.Name, p.PublicKey, addr)
			if port > 0 {
				e.gauge(descPeerPort, float64(port), w.Name, p.PublicKey)
			}
		}
	}
	if roam != nil {
		roam.keep(present)
	}
}
