package discover

import (
	"net/netip"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// This file finds a tunnel that runs through a hub: the client holds no peer
// for the server, but one of its peers' AllowedIPs covers the server's
// tunnel address and that peer's endpoint is another host (a road-warrior
// hub, a site that forwards between spokes). WireGuard sends the server's
// packets to that peer, which decrypts, routes and encrypts them again.

// Hub is the peer a tunnel runs through, as the two ends see it.
type Hub struct {
	// Endpoint is the hub's endpoint as the client's peer names it
	// (host:port); "" when the client has none (the hub dials in).
	Endpoint string `json:"endpoint,omitempty"`
	// PublicKey is the hub's key on the client.
	PublicKey string `json:"public_key"`
	// Allowed is the client peer's AllowedIPs entry that covers the server.
	Allowed string `json:"allowed"`
	// ServerEndpoint and ServerKey are the server's peer that carries the
	// client's tunnel address back ("" when the server holds none): the same
	// key as PublicKey when both spokes use one hub.
	ServerEndpoint string `json:"server_endpoint,omitempty"`
	ServerKey      string `json:"server_key,omitempty"`
}

// Found says whether the path runs through a hub.
func (h Hub) Found() bool { return h.PublicKey != "" }

// Addr is the hub's endpoint address without the port, "" without one.
func (h Hub) Addr() string { return endpointHost(h.Endpoint) }

// Same says whether both spokes name the same hub (the same key).
func (h Hub) Same() bool { return h.ServerKey != "" && h.ServerKey == h.PublicKey }

// matchHub finds, on the client, the peer whose AllowedIPs carry one of the
// server's tunnel addresses (the longest prefix wins, as WireGuard's own
// cryptokey routing picks it) and, on the server, the peer that carries
// the client's back. ok is false when no peer carries the server.
func matchHub(clientWG []facts.WGInterface, clientLinks []Link, serverWG []facts.WGInterface, serverLinks []Link) (Endpoints, bool) {
	best := -1
	var ep Endpoints
	for _, sw := range serverWG {
		for _, addr := range linkAddrs(serverLinks, sw.Name) {
			for _, w := range clientWG {
				for _, p := range w.Peers {
					entry, ok := Covers(p.AllowedIPs, addr)
					if !ok || entry.Bits() <= best {
						continue
					}
					best = entry.Bits()
					ep = Endpoints{TunnelAddr: addr.String(), ClientInterface: w.Name, ClientPort: w.ListenPort, ServerInterface: sw.Name,
						ServerPort: sw.ListenPort, PeerKey: p.PublicKey, EndpointPort: endpointPort(p.Endpoint),
						Hub: Hub{Endpoint: p.Endpoint, PublicKey: p.PublicKey, Allowed: entry.String()}}
				}
			}
		}
	}
	if best < 0 {
		return Endpoints{}, false
	}
	// The way back: the server's peer that carries the client's address.
	back := -1
	for _, addr := range linkAddrs(clientLinks, ep.ClientInterface) {
		for _, p := range peersOf(serverWG, ep.ServerInterface) {
			if entry, ok := Covers(p.AllowedIPs, addr); ok && entry.Bits() > back {
				back = entry.Bits()
				ep.Hub.ServerEndpoint, ep.Hub.ServerKey = p.Endpoint, p.PublicKey
			}
		}
	}
	return ep, true
}

// peersOf are the peers of the interface called name.
func peersOf(ws []facts.WGInterface, name string) []facts.WGPeer {
	for _, w := range ws {
		if w.Name == name {
			return w.Peers
		}
	}
	return nil
}

// linkAddrs are the IPv4 and global IPv6 addresses of one link (link-local
// addresses are no tunnel address).
func linkAddrs(links []Link, name string) []netip.Addr {
	var out []netip.Addr
	for _, l := range links {
		if l.Name != name {
			continue
		}
		for _, a := range l.Addrs {
			ip, err := netip.ParseAddr(a)
			if err != nil || ip.IsLinkLocalUnicast() {
				continue
			}
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// Covers is the entry of allowed (a peer's AllowedIPs) that holds addr most
// narrowly: WireGuard sends addr's packets to the peer whose entry it is,
// the longest prefix winning. ok is false when none holds it.
func Covers(allowed []string, addr netip.Addr) (entry netip.Prefix, ok bool) {
	for _, a := range allowed {
		p, err := netip.ParsePrefix(strings.TrimSpace(a))
		if err == nil && p.Contains(addr) && (!ok || p.Bits() > entry.Bits()) {
			entry, ok = p, true
		}
	}
	return entry, ok
}
