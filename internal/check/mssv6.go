package check

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// TCP/IP header bytes an MSS leaves out of the MTU: 40 for IPv4, 60 for IPv6.
const (
	tcpIPv4Headers = 40
	tcpIPv6Headers = 60
)

var mssClampIPv6 = Check{
	Doc: `For each WireGuard interface that carries IPv6 (an IPv6 allowed IP or route
other than link-local), looks for MSS clamp rules with a fixed value (nft
"tcp option maxseg size set 1380", iptables/ip6tables "-j TCPMSS --set-mss
1380") that cover the tunnel (no interface match, or one naming it) and apply
to IPv6 (nft table inet or ip6 without an IPv4-only match, ip6tables). A value
above the tunnel MTU - 60 is too large for IPv6 inside it, whose headers take
20 bytes more than IPv4's: the tuning guide's MSS is MTU - 40 for IPv4 and
MTU - 60 for IPv6, so 1380 is right for IPv4 in a 1420 tunnel and 20 bytes too
much for IPv6. Full-size IPv6 segments then do not fit the tunnel, and IPv6
never fragments on the way: they depend on ICMPv6 "packet too big" getting back.
A clamp to the route MTU covering the tunnel as well (it computes each
family's own value, and a clamp only lowers the MSS) keeps it quiet. Warning.
Fix: clamp to the route MTU too, which leaves IPv4 at the fixed value and brings
IPv6 to MTU - 60.`,
	Run: runMSSClampIPv6,
}

func runMSSClampIPv6(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		return nil, missing(s, "firewall rules", "nft", "iptables")
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		mtu := w.MTU
		if l := findLink(s, w.Name); mtu == 0 && l != nil {
			mtu = l.MTU
		}
		v6 := ipv6Inside(s, w)
		if mtu == 0 || v6 == "" || pmtuClampCoversIPv6(s, w.Name) {
			continue
		}
		for _, r := range s.Firewall.Rules {
			n, err := strconv.Atoi(r.MSSClamp)
			if err != nil || !clampRuleCovers(r, w.Name) || !appliesToIPv6(r) || n <= mtu-tcpIPv6Headers {
				continue
			}
			out = append(out, mssIPv6Finding(s, w.Name, mtu, n, v6, r))
		}
	}
	return out, nil
}

// ipv6Inside names the IPv6 prefix a tunnel carries (a peer's allowed IP or
// a route into it), "" when it carries none; link-local and multicast routes
// every interface has do not count.
func ipv6Inside(s *facts.Snapshot, w facts.WGInterface) string {
	global := func(prefix string) bool {
		p, err := netip.ParsePrefix(prefix)
		if err != nil {
			a, aerr := netip.ParseAddr(prefix)
			if aerr != nil {
				return prefix == "default"
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		a := p.Addr()
		return a.Is6() && !a.Is4In6() && !a.IsLinkLocalUnicast() && !a.IsMulticast()
	}
	for _, p := range w.Peers {
		for _, ip := range p.AllowedIPs {
			if strings.Contains(ip, ":") && global(ip) {
				return ip
			}
		}
	}
	for _, r := range s.Routes {
		if r.Family == "inet6" && r.Dev == w.Name && (r.Table == "main" || r.Table == "") && (r.Type == "" || r.Type == "unicast") && global(r.Dst) {
			return r.Dst
		}
	}
	return ""
}

// clampRuleCovers reports whether MSS clamp rule r applies to TCP forwarded
// through iface (clampCovers, for one rule).
func clampRuleCovers(r facts.FirewallRule, iface string) bool {
	hook := strings.ToLower(r.Hook)
	if hook == "" {
		hook = strings.ToLower(r.Chain)
	}
	if hook != "forward" && hook != "postrouting" && hook != "prerouting" {
		return false
	}
	return (r.OIf == "" && r.IIf == "") || (r.OIf != "" && ifaceMatches(r.OIf, iface)) || (r.IIf != "" && ifaceMatches(r.IIf, iface))
}

// appliesToIPv6 reports whether a rule can see IPv6 packets: ip6tables, nft
// family ip6, or nft family inet without an IPv4-only match.
func appliesToIPv6(r facts.FirewallRule) bool {
	switch r.Family {
	case "ip6":
		return true
	case "inet":
		t := " " + strings.ToLower(r.Text) + " "
		for _, v4 := range []string{" meta nfproto ipv4 ", " ip saddr ", " ip daddr ", " ip protocol ", " ip version 4 "} {
			if strings.Contains(t, v4) {
				return false
			}
		}
		return true
	}
	return false
}

// pmtuClampCoversIPv6 reports a clamp to the route MTU on the tunnel that
// IPv6 passes too: it brings IPv6 to its own value whatever a fixed clamp set.
func pmtuClampCoversIPv6(s *facts.Snapshot, iface string) bool {
	for _, r := range s.Firewall.Rules {
		if r.MSSClamp == "pmtu" && clampRuleCovers(r, iface) && appliesToIPv6(r) {
			return true
		}
	}
	return false
}

func mssIPv6Finding(s *facts.Snapshot, iface string, mtu, mss int, v6 string, r facts.FirewallRule) finding.Finding {
	want := mtu - tcpIPv6Headers
	f := finding.Finding{
		ID:        catalog.MTUMSSClampIPv6,
		Severity:  finding.Warning,
		Host:      hostOf(s),
		Interface: iface,
		Title:     fmt.Sprintf("MSS clamp %d on %s is %d bytes too large for IPv6 inside the tunnel (at most %d fits)", mss, iface, mss-want, want),
		Detail: fmt.Sprintf("The clamp sets TCP's MSS to %d, which fits IPv4 in the tunnel's MTU %d (%d + 40 bytes of headers) but not "+
			"IPv6, whose headers take 60: full-size IPv6 segments are %d bytes too big for the tunnel. IPv6 routers never fragment, "+
			"so those segments depend on ICMPv6 \"packet too big\" getting back to the hosts; where it does not, IPv6 transfers "+
			"through the tunnel stall while IPv4 works.", mss, mtu, mtu-tcpIPv4Headers, mss-want),
		Evidence: []finding.Evidence{
			{Source: ruleSource(r), Key: fmt.Sprintf("%s %s %s", r.Family, r.Table, r.Chain), Value: ruleTextOr(r)},
			finding.Evidence{Source: "ip link", Key: iface + " mtu", Value: strconv.Itoa(mtu)}.Of(float64(mtu), finding.Bytes),
			finding.Evidence{Source: ruleSource(r), Key: "fixed MSS", Value: strconv.Itoa(mss),
				Threshold: fmt.Sprintf("<= %d for IPv6 (MTU %d - 60)", want, mtu)}.Of(float64(mss), finding.Bytes),
			{Source: "wg show / ip -6 route", Key: "IPv6 inside " + iface, Value: v6},
		},
	}
	rem, err := remedy.MSSClamp(iface, 0, platform(s))
	f.Fixes = fixes(fmt.Sprintf("Clamp the MSS of TCP into %s to the route MTU as well: IPv4 keeps %d, IPv6 gets %d (a clamp only lowers the MSS)",
		iface, min(mss, mtu-tcpIPv4Headers), want), rem, err)
	if err == nil {
		f.Fixes = append(f.Fixes, finding.Fix{
			Description: fmt.Sprintf("Or, where ip6tables writes the firewall: clamp IPv6 into %s to the route MTU", iface),
			Commands: []string{shell.Join("ip6tables", "-t", "mangle", "-A", "FORWARD", "-o", iface, "-p", "tcp", "--tcp-flags", "SYN,RST", "SYN",
				"-j", "TCPMSS", "--clamp-mss-to-pmtu")},
		})
	}
	return f
}
