package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/shell"
)

// This file is what doctor does when the bench cannot cross the tunnel at
// all: an unreachable tunnel is a diagnosis, not a referral to another
// command. A ping through the tunnel tells a tunnel that carries nothing from
// a firewall that refuses iperf3's port; both ends' views of each other
// (handshakes, endpoints, keepalives, AllowedIPs) say why, and the checks'
// findings (a NAT without keepalive, a peer one end lacks) rank as causes.

// Unreachable is a bench that could not cross the tunnel, and what doctor
// read on both ends about why.
type Unreachable struct {
	Where string `json:"where"` // the iperf3 server inside the tunnel, addr:port
	Why   string `json:"why"`   // iperf3's last words
	// AfterRuns is how many bench runs went through before one could not
	// connect (0: none did).
	AfterRuns int `json:"after_runs,omitempty"`
	// PingAnswered: an ICMP echo to the server's tunnel address came back,
	// so the tunnel carries packets and something refuses iperf3's.
	PingAnswered bool `json:"ping_answered"`
	// Facts are what both ends hold for each other, a line each.
	Facts []string `json:"facts"`
}

// benchUnreachable records a bench whose run through the tunnel could not
// connect (the first, or one after runs that went through); it reports
// whether err was one.
func (r *Report) benchUnreachable(err error) bool {
	var ue *iperf.UnreachableError
	if !errors.As(err, &ue) {
		return false
	}
	if host, _, err := net.SplitHostPort(ue.Where); err != nil || host != r.endpoints.TunnelAddr {
		return false // the underlay's run: its own verdict (blocked.go)
	}
	r.Unreachable = &Unreachable{Where: ue.Where, Why: ue.Why}
	if r.Bench != nil {
		r.Unreachable.AfterRuns = len(r.Bench.Runs)
	}
	r.Measured.Benched = true
	r.Threshold = "not applied: the tunnel stopped carrying anything from " + r.Client.String() + " to " + r.Server.String()
	return true
}

// explainUnreachable pings through the tunnel and reads both ends' views of
// each other.
func (r *Report) explainUnreachable(ctx context.Context, c *Config, snaps []*facts.Snapshot) {
	u := r.Unreachable
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := c.Client.Run(pctx, "ping", "-c", "2", "-W", "1", r.endpoints.TunnelAddr)
	cancel()
	u.PingAnswered = err == nil
	u.Facts = unreachableFacts(snapOf(snaps, r.Client), snapOf(snaps, r.Server), r.endpoints)
}

// unreachableFacts are both ends' views of each other, a line each: the
// client's peer that carries the server's address, the server's peer for
// the client, and whether each peer's AllowedIPs hold the other end's
// tunnel address. It is pure.
func unreachableFacts(client, server *facts.Snapshot, ep discover.Endpoints) []string {
	var out []string
	if client == nil || server == nil {
		return out
	}
	cw, cp, ok := peerOf(client, ep.ClientInterface, ep.PeerKey)
	if !ok {
		return out
	}
	at := client.CollectedAt
	out = append(out, fmt.Sprintf("%s %s → its peer %s: endpoint %s, latest handshake %s, keepalive %s",
		client.Host, cw.Name, shortKey(cp.PublicKey), endpointText(cp.Endpoint), check.HandshakeAge(cp, at), keepaliveText(cp)))
	clientAddrs := nonLinkLocal(check.LocalAddrs(client, cw.Name))
	sw, sp, ok := peerOf(server, ep.ServerInterface, cw.PublicKey)
	if !ok && ep.Hub.ServerKey != "" {
		sw, sp, ok = peerOf(server, ep.ServerInterface, ep.Hub.ServerKey)
	}
	if !ok {
		out = append(out, fmt.Sprintf("%s %s holds no peer for %s's key %s, nor a hub that carries it: it drops every packet from %s",
			server.Host, shell.Terminal(ep.ServerInterface), client.Host, shortKey(cw.PublicKey), client.Host))
		return out
	}
	out = append(out, fmt.Sprintf("%s %s → its peer %s: endpoint %s, latest handshake %s, keepalive %s",
		server.Host, sw.Name, shortKey(sp.PublicKey), endpointText(sp.Endpoint), check.HandshakeAge(sp, server.CollectedAt), keepaliveText(sp)))
	if len(clientAddrs) > 0 && !coversAny(sp.AllowedIPs, clientAddrs) {
		out = append(out, fmt.Sprintf("%s's peer %s allows %s, which holds none of %s's tunnel addresses (%s): %s drops what %s sends through the tunnel",
			server.Host, shortKey(sp.PublicKey), allowedText(sp.AllowedIPs), client.Host, addrList(clientAddrs), server.Host, client.Host))
	}
	if serverAddrs := nonLinkLocal(check.LocalAddrs(server, sw.Name)); len(serverAddrs) > 0 && !coversAny(cp.AllowedIPs, serverAddrs) {
		out = append(out, fmt.Sprintf("%s's peer %s allows %s, which holds none of %s's tunnel addresses (%s)",
			client.Host, shortKey(cp.PublicKey), allowedText(cp.AllowedIPs), server.Host, addrList(serverAddrs)))
	}
	return out
}

// peerOf finds iface's peer with key on s.
func peerOf(s *facts.Snapshot, iface, key string) (facts.WGInterface, facts.WGPeer, bool) {
	for _, w := range s.WireGuard {
		if w.Name != iface {
			continue
		}
		for _, p := range w.Peers {
			if p.PublicKey == key {
				return w, p, true
			}
		}
	}
	return facts.WGInterface{}, facts.WGPeer{}, false
}

// nonLinkLocal leaves out link-local addresses: no tunnel address.
func nonLinkLocal(as []netip.Addr) []netip.Addr {
	return slices.DeleteFunc(as, netip.Addr.IsLinkLocalUnicast)
}

// coversAny says whether allowed holds one of addrs.
func coversAny(allowed []string, addrs []netip.Addr) bool {
	return slices.ContainsFunc(addrs, func(a netip.Addr) bool { _, ok := discover.Covers(allowed, a); return ok })
}

func endpointText(e string) string {
	if e == "" {
		return "none (it waits to be dialled)"
	}
	return shell.Terminal(e)
}

func keepaliveText(p facts.WGPeer) string {
	if p.PersistentKeepalive <= 0 {
		return "off"
	}
	return fmt.Sprintf("%d s", p.PersistentKeepalive)
}

func allowedText(allowed []string) string {
	if len(allowed) == 0 {
		return "nothing"
	}
	return shell.Terminal(strings.Join(allowed, ", "))
}

func addrList(as []netip.Addr) string {
	var s []string
	for _, a := range as {
		s = append(s, a.String())
	}
	return strings.Join(s, ", ")
}

// line is the status line of a tunnel the bench could not cross.
func (u *Unreachable) line(client, server string) string {
	s := fmt.Sprintf("UNREACHABLE: %s cannot reach %s through the tunnel (iperf3 to %s: %s)", client, server, shell.Terminal(u.Where), shell.Terminal(u.Why))
	if u.AfterRuns > 0 {
		s = fmt.Sprintf("UNREACHABLE at times: after %d bench runs through the tunnel, %s could not reach %s through it (iperf3 to %s: %s)",
			u.AfterRuns, client, server, shell.Terminal(u.Where), shell.Terminal(u.Why))
	}
	if u.PingAnswered {
		return s + "; a ping through the tunnel is answered, so the tunnel carries packets and something on " + server + " refuses iperf3's port."
	}
	return s + "; a ping through the tunnel is not answered either: the tunnel carries nothing."
}

// unreachableGain is what fixing a cause brings to a tunnel that carries
// nothing: its entry's own words where it has them.
func unreachableGain(f finding.Finding) string {
	if g := doctorOf(f.ID).Gain; g != "" {
		return g
	}
	return "the tunnel carries traffic again, if this is why it carries none"
}
