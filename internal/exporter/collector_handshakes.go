package exporter

// When a WireGuard peer last shook hands: a stale handshake is a dead tunnel.
var (
	descHandshake = desc("wireguard_peer_latest_handshake_timestamp_seconds", "Unix time of the peer's latest handshake; 0 means never.", "interface", "peer")
	descHSAge     = desc("wireguard_peer_handshake_age_seconds", "Seconds from the peer's latest handshake to the collection; absent when there was none.", "interface", "peer")
)

var handshakesCollector = collector{
	name: "wireguard_handshake",
	doc: "Each WireGuard peer's latest handshake (wg show dump) and its age at the collection; " +
		"a peer that never shook hands has timestamp 0 and no age (an age would be meaningless, not infinite).",
	descs: []*Desc{descHandshake, descHSAge},
	emit: func(h hostFacts, e *emitter) {
		for _, w := range h.wireguard {
			for _, p := range h.peers(w) {
				at := 0.0
				if !p.LatestHandshake.IsZero() {
					at = unixSeconds(p.LatestHandshake)
					age := h.snap.CollectedAt.Sub(p.LatestHandshake).Seconds()
					e.gauge(descHSAge, max(age, 0), w.Name, p.PublicKey)
				}
				e.gauge(descHandshake, at, w.Name, p.PublicKey)
			}
		}
	},
}
