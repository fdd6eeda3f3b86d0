// Package discover finds the tunnel between two hosts: which WireGuard
// interface on each end faces the other, the server's tunnel address and the
// endpoint address under it. bench, mtu, shape-sweep and fix --verify use it.
package discover

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// Link is an interface and its addresses, from "ip -j addr" or BusyBox ip's text.
type Link = parse.LinkAddrs

// Endpoints is what bench needs to know about a client/server pair.
type Endpoints struct {
	TunnelAddr      string // the server's WireGuard address
	UnderlayAddr    string // the server's endpoint address, as the client's peer names it
	ClientInterface string
	ServerInterface string
	// ClientPort and ServerPort are the interfaces' listen ports: a UDP
	// socket bound to one is that tunnel end's.
	ClientPort, ServerPort int
	// PeerKey is the server's public key as the client's peer names it, and
	// EndpointPort the port of that peer's endpoint (0 without one): the
	// port the client's tunnel datagrams carry towards the server.
	PeerKey      string
	EndpointPort int
	// Hub, when found, is the peer the tunnel runs through: the client holds
	// no peer for the server, and UnderlayAddr is "" (the path has one
	// underlay per leg, each ending on the hub).
	Hub Hub
}

// NotFoundError says why the tunnel between two hosts could not be found;
// a command that takes the addresses as flags says which to give.
type NotFoundError struct {
	Reason string
	// TunnelOnly: the underlay address was found, the tunnel address is missing.
	TunnelOnly bool
}

func (e *NotFoundError) Error() string { return e.Reason }

// Match finds, among the client's WireGuard interfaces, the peer that is the
// server: its key is a server interface's key, or its endpoint is one of the
// server's addresses (on a hub, the one whose allowed IPs hold a server
// address first). Failing that, the peer whose AllowedIPs carry the server's
// tunnel address is the hub the tunnel runs through (hub.go). Interfaces
// that are not links on their host are
// ignored: "wg show all dump" also lists userspace interfaces of other
// namespaces that share /var/run/wireguard.
func Match(clientWG []facts.WGInterface, clientLinks []Link, serverWG []facts.WGInterface, serverLinks []Link) (Endpoints, error) {
	clientWG = onHost(clientWG, clientLinks)
	serverWG = onHost(serverWG, serverLinks)
	if len(clientWG) == 0 {
		return Endpoints{}, &NotFoundError{Reason: "the client has no WireGuard interface"}
	}
	serverAddr := map[string]string{} // address -> link
	for _, l := range serverLinks {
		for _, a := range l.Addrs {
			serverAddr[a] = l.Name
		}
	}
	serverByKey := map[string]facts.WGInterface{}
	for _, w := range serverWG {
		serverByKey[w.PublicKey] = w
	}
	// The server's peer is the one with a server interface's key; else one
	// at a server address whose allowed IPs hold a server address; else the
	// first at a server address. A hub also lists, at the server's address,
	// road warriors behind the server's NAT, on ports of their own.
	var (
		bestW    facts.WGInterface
		bestP    facts.WGPeer
		bestRank int
	)
peers:
	for _, w := range clientWG {
		for _, p := range w.Peers {
			_, keyMatch := serverByKey[p.PublicKey]
			_, addrMatch := serverAddr[endpointHost(p.Endpoint)]
			rank := 0
			switch {
			case keyMatch:
				rank = 3
			case addrMatch && allowedAddrOnServer(p.AllowedIPs, serverAddr) != "":
				rank = 2
			case addrMatch:
				rank = 1
			}
			if rank > bestRank {
				bestW, bestP, bestRank = w, p, rank
				if rank == 3 {
					break peers
				}
			}
		}
	}
	if bestRank == 0 {
		if ep, ok := matchHub(clientWG, clientLinks, serverWG, serverLinks); ok {
			return ep, nil
		}
		return Endpoints{}, &NotFoundError{Reason: fmt.Sprintf("no peer of the client's WireGuard interfaces (%s) has its endpoint on the server or the server's key, "+
			"nor carries one of the server's tunnel addresses (through a hub)", names(clientWG))}
	}
	w, p := bestW, bestP
	host := endpointHost(p.Endpoint)
	sw, keyMatch := serverByKey[p.PublicKey]
	ep := Endpoints{ClientInterface: w.Name, ClientPort: w.ListenPort, PeerKey: p.PublicKey, EndpointPort: endpointPort(p.Endpoint)}
	if _, ok := serverAddr[host]; ok {
		ep.UnderlayAddr = host
	}
	if keyMatch {
		ep.ServerInterface, ep.ServerPort = sw.Name, sw.ListenPort
		ep.TunnelAddr = firstIPv4(serverLinks, sw.Name)
	}
	if ep.TunnelAddr == "" {
		ep.TunnelAddr = allowedAddrOnServer(p.AllowedIPs, serverAddr)
	}
	if ep.TunnelAddr == "" {
		return ep, &NotFoundError{Reason: fmt.Sprintf("found the server as peer of %s, but not its tunnel address", w.Name), TunnelOnly: true}
	}
	return ep, nil
}

func onHost(ws []facts.WGInterface, links []Link) []facts.WGInterface {
	have := map[string]bool{}
	for _, l := range links {
		have[l.Name] = true
	}
	var out []facts.WGInterface
	for _, w := range ws {
		if have[w.Name] {
			out = append(out, w)
		}
	}
	return out
}

func names(ws []facts.WGInterface) string {
	var n []string
	for _, w := range ws {
		n = append(n, w.Name)
	}
	return strings.Join(n, ", ")
}

func endpointHost(ep string) string {
	if h, _, err := net.SplitHostPort(ep); err == nil {
		return h
	}
	return ep
}

func endpointPort(ep string) int {
	_, port, err := net.SplitHostPort(ep)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return 0
	}
	return n
}

func firstIPv4(links []Link, name string) string {
	for _, l := range links {
		if l.Name != name {
			continue
		}
		for _, a := range l.Addrs {
			if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
				return a
			}
		}
	}
	return ""
}

// allowedAddrOnServer picks a host address from the peer's allowed IPs that the server holds.
func allowedAddrOnServer(allowed []string, serverAddr map[string]string) string {
	for _, a := range allowed {
		host := strings.SplitN(a, "/", 2)[0]
		if _, ok := serverAddr[host]; ok {
			return host
		}
	}
	return ""
}

// Tunnel asks both targets for their WireGuard state and addresses and
// matches them up.
func Tunnel(ctx context.Context, client, server target.Target) (Endpoints, error) {
	cWG, cLinks, err := wgState(ctx, client)
	if err != nil {
		return Endpoints{}, err
	}
	sWG, sLinks, err := wgState(ctx, server)
	if err != nil {
		return Endpoints{}, err
	}
	return Match(cWG, cLinks, sWG, sLinks)
}

func wgState(ctx context.Context, t target.Target) ([]facts.WGInterface, []Link, error) {
	links, err := Addresses(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	out, err := t.Run(ctx, "wg", "show", "all", "dump")
	if err != nil {
		if target.IsNotFound(err) {
			return nil, links, &NotFoundError{Reason: fmt.Sprintf("wg is not installed on %s (apt-get install wireguard-tools)", t)}
		}
		return nil, links, err
	}
	wg, err := parse.ParseWGDump(bytes.NewReader(out))
	if err != nil {
		return nil, links, fmt.Errorf("%s: %w", t, err)
	}
	return wg, links, nil
}
