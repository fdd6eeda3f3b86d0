package remedy

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// ECMPSpec is the existing site-to-site tunnel an ECMP change starts from,
// as one end sees it: read from the running host (ecmpTunnels.plan) or
// from its wg-quick config (fix.PlanECMP), laid out the same way.
type ECMPSpec struct {
	Iface      string
	Tunnels    int
	Own        netip.Prefix // this end's tunnel address, with its subnet's length
	PeerAddr   netip.Addr   // the other end's tunnel address
	ListenPort int
	Endpoint   string   // the other end's host:port, "" when the peer has none
	AllowedIPs []string // the existing peer's
	// Ports and PeerPorts are the new tunnels' listen ports here and on the
	// other end (SpreadPorts), nil for the ports after each end's own.
	Ports, PeerPorts []int
}

// ECMPTunnel is one tunnel of the change on this end.
type ECMPTunnel struct {
	Dev        string
	Address    netip.Prefix // this end's (ECMPAddress k of Own)
	ListenPort int
	Endpoint   string // the other end's host:port for this tunnel, "" without one
}

// Layout is the tunnels, the existing one first, and the allowed IPs every
// tunnel's peer takes: the existing peer's and all of the other end's
// tunnel addresses. A flow this end starts takes the address of the tunnel
// its first route lookup picked, and the lookup with its real ports may
// hash it onto another tunnel, so every tunnel accepts every address of the
// other end (allowed IPs may overlap across interfaces).
func (s ECMPSpec) Layout() ([]ECMPTunnel, []string, error) {
	host, port := "", 0
	if s.Endpoint != "" {
		i := strings.LastIndexByte(s.Endpoint, ':')
		p, err := strconv.Atoi(s.Endpoint[i+1:])
		if i < 0 || err != nil || p < 1 || p > 65535 {
			return nil, nil, fmt.Errorf("%s's peer endpoint %q: want host:port", s.Iface, s.Endpoint)
		}
		host, port = s.Endpoint[:i], p
	}
	allowed := slices.Clone(s.AllowedIPs)
	var out []ECMPTunnel
	for k, dev := range ECMPDevices(s.Iface, s.Tunnels) {
		own, err := ECMPAddress(s.Own, k)
		if err != nil {
			return nil, nil, err
		}
		peer, err := ECMPAddress(netip.PrefixFrom(s.PeerAddr, 32), k)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Contains(allowed, peer.String()) {
			allowed = append(allowed, peer.String())
		}
		t := ECMPTunnel{Dev: dev, Address: own, ListenPort: s.ListenPort + k}
		peerPort := port + k
		if k > 0 && s.Ports != nil {
			t.ListenPort, peerPort = s.Ports[k-1], s.PeerPorts[k-1]
		}
		if t.ListenPort > 65535 || (host != "" && peerPort > 65535) {
			return nil, nil, fmt.Errorf("%s listens on %d: no room for %d more ports above it", s.Iface, s.ListenPort, s.Tunnels-1)
		}
		if host != "" {
			t.Endpoint = host + ":" + strconv.Itoa(peerPort)
		}
		out = append(out, t)
	}
	return out, allowed, nil
}
