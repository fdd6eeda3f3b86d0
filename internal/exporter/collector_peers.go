package exporter

import (
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
)

// A WireGuard peer, its friendly name and what it carries.
var (
	descPeerInfo = desc("wireguard_peer_info", "A WireGuard peer; name is its friendly name from --peer-names, empty when it has none.", "interface", "peer", "name", "allowed_ips")
	descRxBytes  = desc("wireguard_peer_receive_bytes_total", "Bytes received from the peer.", "interface", "peer")
	descTxBytes  = desc("wireguard_peer_transmit_bytes_total", "Bytes sent to the peer.", "interface", "peer")
	descPeersCut = desc("wireguard_peers_without_series", "Peers of the interface left without series of their own by --collector.peers.max (0 when none).", "interface")
)

var peersCollector = collector{
	name: "wireguard_peer",
	doc: "Each WireGuard peer (wg show dump): its allowed IPs and friendly name (--peer-names), and the bytes it received and sent, the tunnel's throughput; " +
		"on an interface with more peers than --collector.peers.max, how many have no series of their own.",
	descs: []*Desc{descPeerInfo, descRxBytes, descTxBytes, descPeersCut},
	emit: func(h hostFacts, e *emitter) {
		for _, w := range h.wireguard {
			for _, p := range h.peers(w) {
				e.gauge(descPeerInfo, 1, w.Name, p.PublicKey, h.labels.names[p.PublicKey], strings.Join(p.AllowedIPs, ","))
				e.counter(descRxBytes, float64(p.RxBytes), w.Name, p.PublicKey)
				e.counter(descTxBytes, float64(p.TxBytes), w.Name, p.PublicKey)
			}
			e.gauge(descPeersCut, float64(len(w.Peers)-len(h.peers(w))), w.Name)
		}
	},
}

// DefaultMaxPeers is --collector.peers.max: a hub's 1,000 peers would make
// 7,000 per-peer series in every scrape (7 each), 200 make at most 1,400.
const DefaultMaxPeers = 200

// liveHandshake is how recent a live peer's handshake is (WireGuard's
// RejectAfterTime, as wg.handshake-stale counts it).
const liveHandshake = 3 * time.Minute

// exportedPeers are the peers of an interface that get series of their own:
// all of them up to pl.max (0: no limit); past it, pl.max of them, named
// peers (--peer-names) first, then those with a live session (a handshake
// within 3 minutes of at), then the others, each in the dump's order. A hub's
// offline road warriors are then left to wg.handshake-stale, one finding.
func exportedPeers(peers []facts.WGPeer, pl peerLabels, at time.Time) []facts.WGPeer {
	if pl.max <= 0 || len(peers) <= pl.max {
		return peers
	}
	rank := func(p facts.WGPeer) int {
		switch {
		case pl.names[p.PublicKey] != "":
			return 0
		case !p.LatestHandshake.IsZero() && at.Sub(p.LatestHandshake) <= liveHandshake:
			return 1
		}
		return 2
	}
	keep := make([]bool, len(peers))
	n := 0
	for r := 0; r <= 2 && n < pl.max; r++ {
		for i, p := range peers {
			if n < pl.max && !keep[i] && rank(p) == r {
				keep[i] = true
				n++
			}
		}
	}
	out := make([]facts.WGPeer, 0, pl.max)
	for i, p := range peers {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}
