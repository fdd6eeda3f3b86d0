package exporter

import "strings"

// A WireGuard peer, its friendly name and what it carries.
var (
	descPeerInfo = desc("wireguard_peer_info", "A WireGuard peer; name is its friendly name from --peer-names, empty when it has none.", "interface", "peer", "name", "allowed_ips")
	descRxBytes  = desc("wireguard_peer_receive_bytes_total", "Bytes received from the peer.", "interface", "peer")
	descTxBytes  = desc("wireguard_peer_transmit_bytes_total", "Bytes sent to the peer.", "interface", "peer")
)

var peersCollector = collector{
	name:  "wireguard_peer",
	doc:   "Each WireGuard peer (wg show dump): its allowed IPs and friendly name (--peer-names), and the bytes it received and sent, the tunnel's throughput.",
	descs: []*Desc{descPeerInfo, descRxBytes, descTxBytes},
	emit: func(h hostFacts, e *emitter) {
		for _, w := range h.wireguard {
			for _, p := range w.Peers {
				e.gauge(descPeerInfo, 1, w.Name, p.PublicKey, h.labels.names[p.PublicKey], strings.Join(p.AllowedIPs, ","))
				e.counter(descRxBytes, float64(p.RxBytes), w.Name, p.PublicKey)
				e.counter(descTxBytes, float64(p.TxBytes), w.Name, p.PublicKey)
			}
		}
	},
}
