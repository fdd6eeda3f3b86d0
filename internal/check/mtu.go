package check

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// WireGuard's encapsulation overhead: outer IP header + UDP 8 + WireGuard 32.
const (
	overheadIPv4 = 60 // 20 + 8 + 32
	overheadIPv6 = 80 // 40 + 8 + 32
)

var tunnelTooLarge = Check{
	Doc: `For each WireGuard interface, finds the link every peer's endpoint route
leaves by (ip route get <endpoint>) and compares the interface MTU with that
link's MTU minus WireGuard's overhead: 60 bytes for an IPv4 outer header, 80 for
IPv6. The narrowest uplink decides. Where an IPsec policy (ip xfrm) selects
the tunnel's outer packets, as in the ICMP-less site-to-site case's WireGuard
over IPsec, its encapsulation counts too, at its most: ESP's 10 bytes, the
cipher's IV and padding, the ICV, a tunnel mode's outer header and NAT-T's UDP
header (cbc(aes) with hmac(sha256) in tunnel mode: 77 bytes; the largest common
suite is assumed when the security association cannot be read). A larger tunnel MTU makes every full-size
packet too big for the underlay, so it is fragmented or dropped; the tuning guide gives the
60/80 rule. (The remote users case is no example: it lowered 1420 to 1280 and went from 5 to
53 Mbit/s, but its own path MTU search later found 1440 fits, so its 1420 was not too large
and this check rightly stays quiet on it.)

What happens depends on the implementation. wireguard-go and other userspace
implementations set DF on their outer packets: the oversized ones are refused
and bulk transfers stall (critical). Kernel WireGuard clears DF: the host
fragments each full-size packet into two, which works at the cost of twice the
packets and a whole packet lost with any fragment, and stalls only where the
path drops fragments (warning: the bench and the MTU probe say which).`,
	Run: runTunnelTooLarge,
}

// underlayLimit is the tightest constraint on one tunnel's MTU.
type underlayLimit struct {
	allowed  int    // largest safe tunnel MTU
	dev      string // uplink the endpoint route uses
	devMTU   int
	overhead int
	endpoint string
	peer     string
	ipsec    ipsecLayer // what IPsec adds on the way, if a policy selects the tunnel's packets
}

// limitFor returns the tightest underlay limit over iface's endpoint routes.
func limitFor(s *facts.Snapshot, iface string) (underlayLimit, bool) {
	var best underlayLimit
	found := false
	ports := peerPorts(s, iface)
	for _, e := range s.Endpoints {
		if e.Interface != iface || e.Dev == "" || e.Dev == iface {
			continue
		}
		l := findLink(s, e.Dev)
		if l == nil || l.MTU <= 0 {
			continue
		}
		over := overheadIPv4
		if familyOf(e.Endpoint) == "inet6" {
			over = overheadIPv6
		}
		lim := underlayLimit{dev: e.Dev, devMTU: l.MTU, overhead: over, endpoint: e.Endpoint, peer: e.Peer}
		lim.ipsec, _ = ipsecFor(s, e.Src, e.Endpoint, ports[e.Peer])
		lim.allowed = l.MTU - over - lim.ipsec.bytes
		if !found || lim.allowed < best.allowed {
			best, found = lim, true
		}
	}
	return best, found
}

func runTunnelTooLarge(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	if len(s.Endpoints) == 0 {
		if why := noteFor(s, "ip route get"); why != "" {
			return nil, skipf("endpoint routes not collected (%s)", why)
		}
		return nil, nil // no peer has an endpoint (a server of roaming clients)
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		lim, ok := limitFor(s, w.Name)
		if !ok || w.MTU <= lim.allowed {
			continue
		}
		ipv := "IPv4"
		if lim.overhead == overheadIPv6 {
			ipv = "IPv6"
		}
		sev, fate := finding.Critical, "is fragmented or dropped"
		switch w.Implementation {
		case "kernel":
			sev, fate = finding.Warning, "leaves as two fragments: kernel WireGuard clears DF on its outer packets, so the tunnel "+
				"works at the cost of twice the packets, a whole packet lost with either fragment, and a stall wherever the path drops fragments"
		case "userspace":
			fate = "is refused: a userspace WireGuard sets DF on its outer packets, so bulk transfers stall"
		}
		// What IPsec adds, said once for the detail, the threshold and its evidence.
		var viaIPsec, upTo, lessIPsec string
		var ev []finding.Evidence
		if b := lim.ipsec.bytes; b > 0 {
			viaIPsec, upTo, lessIPsec = fmt.Sprintf(" and IPsec (%s) up to %d more", lim.ipsec.what, b), "up to ", fmt.Sprintf(" − %d IPsec", b)
			ev = append(ev, finding.Evidence{Source: "ip xfrm policy", Key: "IPsec on the way to " + lim.endpoint,
				Value: fmt.Sprintf("%s: up to %d bytes", lim.ipsec.what, b)}.Of(float64(b), finding.Bytes))
		}
		out = append(out, finding.Finding{
			ID:        catalog.MTUTunnelTooLarge,
			Severity:  sev,
			Host:      hostOf(s),
			Interface: w.Name,
			Peer:      lim.peer,
			Title:     fmt.Sprintf("%s MTU %d is larger than %s allows (%d)", w.Name, w.MTU, lim.dev, lim.allowed),
			Detail: fmt.Sprintf("Traffic to endpoint %s leaves by %s (MTU %d). With an %s outer header WireGuard adds %d bytes%s, "+
				"so a full-size %d-byte tunnel packet becomes %s%d bytes on %s and %s.",
				lim.endpoint, lim.dev, lim.devMTU, ipv, lim.overhead, viaIPsec, w.MTU, upTo, w.MTU+lim.overhead+lim.ipsec.bytes, lim.dev, fate),
			Evidence: append([]finding.Evidence{
				finding.Evidence{Source: "ip link", Key: w.Name + " mtu", Value: strconv.Itoa(w.MTU), Threshold: fmt.Sprintf("<= %d (%s mtu %d − %d %s overhead%s)", lim.allowed, lim.dev, lim.devMTU, lim.overhead, ipv, lessIPsec)}.Of(float64(w.MTU), finding.Bytes),
				{Source: "ip route get " + lim.endpoint, Key: "dev", Value: lim.dev},
			}, ev...),
			Fixes: wgMTUFix(s, w.Name, lim.allowed,
				fmt.Sprintf("Lower %s's MTU to %d (on both ends of the tunnel)", w.Name, lim.allowed)),
		})
	}
	return out, nil
}

// peerPorts are the UDP ports of iface's peers' endpoints, by peer key
// (read once: a hub's 1,000 endpoints each looked up among 1,000 peers took
// two thirds of diagnose's time).
func peerPorts(s *facts.Snapshot, iface string) map[string]int {
	ports := map[string]int{}
	for _, w := range s.WireGuard {
		if w.Name != iface {
			continue
		}
		for _, p := range w.Peers {
			if _, seen := ports[p.PublicKey]; seen {
				continue
			}
			if ap, err := netip.ParseAddrPort(p.Endpoint); err == nil {
				ports[p.PublicKey] = int(ap.Port())
			}
		}
	}
	return ports
}

var mssClampMissing = Check{
	Doc: `When the host forwards packets (net.ipv4.ip_forward = 1) and a WireGuard
interface's MTU is below the largest MTU of its LAN links (up, not an uplink;
the uplinks count too when a NAT rule sends tunnel clients out by them), TCP
hosts behind it advertise an MSS the tunnel cannot carry. Unless a firewall rule
rewrites the MSS (nft "tcp option maxseg size set", iptables TCPMSS) for traffic
through that tunnel, they depend on ICMP "fragmentation needed" reaching them —
the PMTUD black hole of the ICMP-less site-to-site case (30 KB/s one way). The tuning guide recommends the
clamp for every site-to-site tunnel.`,
	Run: runMSSClampMissing,
}

func runMSSClampMissing(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	fwd, ok := s.Sysctls["net.ipv4.ip_forward"]
	if !ok {
		return nil, missingSysctl(s, "net.ipv4.ip_forward")
	}
	if strings.TrimSpace(fwd) != "1" || len(s.WireGuard) == 0 {
		return nil, nil
	}
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		if why := noteFor(s, "nft", "iptables"); why != "" {
			return nil, skipf("firewall rules not collected (%s)", why)
		}
	}
	lanDev, lanMTU := lanLink(s)
	if lanDev == "" {
		return nil, nil // nothing forwards into the tunnel
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		if w.MTU <= 0 || w.MTU >= lanMTU || clampCovers(s, w.Name) {
			continue
		}
		mss := w.MTU - 40
		out = append(out, finding.Finding{
			ID:        catalog.MTUMSSClampMissing,
			Severity:  finding.Warning,
			Host:      hostOf(s),
			Interface: w.Name,
			Title:     fmt.Sprintf("No MSS clamp for TCP forwarded into %s (MTU %d < %s MTU %d)", w.Name, w.MTU, lanDev, lanMTU),
			Detail: fmt.Sprintf("This host forwards packets, and hosts behind %s open TCP connections with an MSS of up to %d; "+
				"the tunnel carries at most %d. Without a clamp they rely on ICMP fragmentation-needed getting back to them, "+
				"and where it does not, large transfers stall (a PMTUD black hole).", lanDev, lanMTU-40, mss),
			Evidence: []finding.Evidence{
				finding.Evidence{Source: "sysctl", Key: "net.ipv4.ip_forward", Value: "1"}.Of(1, finding.Flag),
				finding.Evidence{Source: "ip link", Key: w.Name + " mtu", Value: strconv.Itoa(w.MTU), Threshold: fmt.Sprintf("< %s mtu %d", lanDev, lanMTU)}.Of(float64(w.MTU), finding.Bytes),
				{Source: firewallSource(s), Key: "MSS clamp rule for " + w.Name, Value: "none", Threshold: "a TCPMSS / maxseg rule on forward"},
			},
			Fixes: mssClampFix(s, w.Name),
		})
	}
	return out, nil
}

// lanLink picks the widest up link that is neither the tunnel nor loopback
// nor an uplink: where forwarded TCP into the tunnel comes from. A host with
// only uplinks still forwards into the tunnel when it NATs (a VPN server that
// sends its clients to the internet), so then the uplinks count.
func lanLink(s *facts.Snapshot) (string, int) {
	up := uplinks(s)
	nat := false
	for _, r := range s.Firewall.Rules {
		nat = nat || isNATRule(r)
	}
	var dev string
	var mtu int
	for _, pass := range []bool{false, true} {
		if pass && (dev != "" || !nat) {
			break
		}
		for _, l := range s.Links {
			if l.Name == "lo" || isWireGuard(s, l.Name) || l.Kind == "wireguard" || !linkUp(&l) || up[l.Name] != pass {
				continue
			}
			if l.MTU > mtu || (l.MTU == mtu && l.Name < dev) {
				dev, mtu = l.Name, l.MTU
			}
		}
	}
	return dev, mtu
}

// clampCovers reports whether an MSS rewrite rule applies to TCP forwarded
// through iface, in either direction (a clamp on either SYN limits the flow).
func clampCovers(s *facts.Snapshot, iface string) bool {
	for _, r := range s.Firewall.Rules {
		if r.MSSClamp == "" {
			continue
		}
		hook := strings.ToLower(r.Hook)
		if hook == "" {
			hook = strings.ToLower(r.Chain)
		}
		if hook != "forward" && hook != "postrouting" && hook != "prerouting" {
			continue
		}
		// No interface match at all covers everything; otherwise either side may name the tunnel.
		if (r.OIf == "" && r.IIf == "") || (r.OIf != "" && ifaceMatches(r.OIf, iface)) || (r.IIf != "" && ifaceMatches(r.IIf, iface)) {
			return true
		}
	}
	return false
}

// ifaceMatches applies an iifname/oifname match to a device: empty matches
// all, "wg*" (nft) and "wg+" (iptables) are prefixes, a leading "!" negates.
// A set ("eth0,eth1", as the collector joins it) matches when any member does.
func ifaceMatches(match, dev string) bool {
	if m, ok := strings.CutPrefix(strings.Trim(match, `"`), "!"); ok {
		// "! -i wg0", nft iifname != { "lo", "br-lan" }: every interface but these.
		return !ifaceMatches(m, dev)
	}
	if strings.Contains(match, ",") {
		for _, m := range strings.Split(match, ",") {
			if m != "" && ifaceMatches(m, dev) {
				return true
			}
		}
		return false
	}
	m := strings.Trim(match, `"`)
	switch {
	case m == "":
		return true
	case strings.HasSuffix(m, "*") || strings.HasSuffix(m, "+"):
		return strings.HasPrefix(dev, m[:len(m)-1])
	}
	return m == dev
}

func firewallSource(s *facts.Snapshot) string {
	switch {
	case s.Firewall.Nftables && s.Firewall.Iptables:
		return "nft list ruleset, iptables-save"
	case s.Firewall.Iptables:
		return "iptables-save"
	}
	return "nft list ruleset"
}

// mssClampFix clamps the MSS of TCP forwarded into iface to the route MTU.
func mssClampFix(s *facts.Snapshot, iface string) []finding.Fix {
	r, err := remedy.MSSClamp(iface, 0, platform(s))
	return fixes("Clamp the MSS of TCP forwarded into "+iface+" to the route MTU", r, err)
}

// sortedKeys returns m's keys in order, for stable evidence.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
