package check

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// natKeepalive is the keepalive the fix sets: WireGuard's own advice for a
// peer behind NAT (wg(8): "a sensible interval ... is 25"), below the 30 s
// that the shortest common NAT timeouts (Linux conntrack's unreplied UDP)
// allow.
const natKeepalive = 25

var crossNATKeepalive = CrossCheck{
	Title: "A tunnel end sits behind a NAT and sends no keepalive",
	Doc: `Matches both ends of each tunnel by public key and compares the endpoint each
end holds for the other (what the far end's packets arrived from) with the
addresses the other end has (its local routes). An endpoint that is none of
them is a NAT between the two, in front of that end. A NAT forgets an idle
UDP mapping (Linux conntrack after 30 s unreplied, 120 s once both ways
talked; home routers after 30 to 180 s), and from then on the far end's
packets go to a mapping that no longer exists: the far end cannot reach the
NATed end through the tunnel until that end sends again. A NATed end whose
peer has no PersistentKeepalive is a warning; the fix sets a keepalive of 25 s
on that end's peer, which keeps the mapping open.`,
	Run: runCrossNATKeepalive,
}

func runCrossNATKeepalive(snaps []*facts.Snapshot, _ Options) []finding.Finding {
	var out []finding.Finding
	for _, p := range pairTunnels(snaps) {
		if !p.bKnowsA {
			continue
		}
		for _, side := range [][2]tunnelEnd{{p.a, p.b}, {p.b, p.a}} {
			natted, far := side[0], side[1]
			if f, ok := natFinding(natted, far); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// natFinding reports natted when far sees it at an address natted does not
// have and natted's peer for far sends no keepalive.
func natFinding(natted, far tunnelEnd) (finding.Finding, bool) {
	seen, err := netip.ParseAddrPort(far.peer.Endpoint)
	if err != nil || natted.peer.PersistentKeepalive > 0 {
		return finding.Finding{}, false
	}
	own := localAddrs(natted.snap)
	if len(own) == 0 || own[seen.Addr().Unmap()] {
		return finding.Finding{}, false // no addresses to compare, or no NAT
	}
	nh, fh := hostName(natted.snap), hostName(far.snap)
	r, err := remedy.WGPeerKeepalive(natted.iface.Name, natted.peer.PublicKey, natKeepalive, platform(natted.snap))
	return finding.Finding{
		ID:        catalog.WGNATNoKeepalive,
		Severity:  finding.Warning,
		Host:      hostOf(natted.snap),
		Interface: natted.iface.Name,
		Peer:      natted.peer.PublicKey,
		Title:     fmt.Sprintf("%s sits behind a NAT (%s sees it at %s) and sends %s no keepalive", nh, fh, seen, fh),
		Detail: fmt.Sprintf("%s's packets reach %s from %s, an address %s does not have: a NAT between them maps %s's UDP port. "+
			"When the tunnel idles longer than the NAT keeps a mapping, %s's packets for %s go to a mapping that no longer exists, "+
			"and %s cannot reach %s through the tunnel until %s sends again.", nh, fh, seen, nh, nh, fh, nh, fh, nh, nh),
		Evidence: []finding.Evidence{
			{Source: "wg show " + far.iface.Name + " endpoints (" + fh + ")", Key: "endpoint of " + finding.ShortKey(natted.iface.PublicKey), Value: seen.String(),
				Threshold: "one of " + nh + "'s addresses"},
			{Source: "ip route show table local (" + nh + ")", Key: "local addresses", Value: localList(own)},
			finding.Evidence{Source: "wg show " + natted.iface.Name + " persistent-keepalive (" + nh + ")", Key: "keepalive for " + finding.ShortKey(natted.peer.PublicKey),
				Value: "off", Threshold: "> 0 behind NAT"}.Of(0, finding.Seconds),
			handshakeEvidence(finding.Evidence{Source: "wg show " + far.iface.Name + " dump (" + fh + ")", Key: "latest handshake"}, far.peer, far.snap.CollectedAt),
		},
		Fixes: fixes(fmt.Sprintf("Make %s's %s send %s a keepalive every %d s, so the NAT keeps its mapping open", nh, natted.iface.Name, fh, natKeepalive), r, err),
	}, true
}

// localAddrs are the host's own addresses, as a set.
func localAddrs(s *facts.Snapshot) map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	for _, a := range LocalAddrs(s, "") {
		out[a] = true
	}
	return out
}

// LocalAddrs are the host's own addresses, from its local routing table: on
// device dev, or on any device when dev is "".
func LocalAddrs(s *facts.Snapshot, dev string) []netip.Addr {
	var out []netip.Addr
	for _, r := range s.Routes {
		if r.Table != "local" || r.Type != "local" || (dev != "" && r.Dev != dev) {
			continue
		}
		if a, err := netip.ParseAddr(r.Dst); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// localList is the addresses people compare, the loopback and link-local left out.
func localList(own map[netip.Addr]bool) string {
	var as []netip.Addr
	for a := range own {
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			as = append(as, a)
		}
	}
	slices.SortFunc(as, func(a, b netip.Addr) int { return a.Compare(b) })
	s := ""
	for i, a := range as {
		if i > 0 {
			s += ", "
		}
		s += shell.Terminal(a.String())
	}
	if s == "" {
		return "none but loopback and link-local"
	}
	return s + " (" + strconv.Itoa(len(as)) + ")"
}

// natPeer is the keepalive fix's host rule for its peer: a peer of the
// interface, on a host whose own addresses its snapshot holds (the NAT
// comparison needs them).
func natPeer(h *facts.Snapshot, p map[string]string, v string) error {
	if err := peerOfInterface(h, p, v); err != nil {
		return err
	}
	if len(localAddrs(h)) == 0 {
		return errors.New("is a peer of a host whose addresses the snapshot lacks (no local routes): no NAT in front of it can be told")
	}
	return nil
}
