package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestMSSClampIPv6 runs on snapshots collected from a LAN lab whose tunnel
// carries IPv6 too (fd77::/64 on the WireGuard interfaces, fd10::/48 and
// fd20::/48 routed through them): A clamps with nft in table inet, B with
// iptables and ip6tables, both fixed at 1380 in a 1420 tunnel.
func TestMSSClampIPv6(t *testing.T) {
	a, b := loadSnapshot(t, "lab-ipv6-mss1380-a.json"), loadSnapshot(t, "lab-ipv6-mss1380-b.json")
	fired := func(rule string) func(t *testing.T, fs []finding.Finding) {
		return func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if !strings.Contains(f.Title, "MSS clamp 1380 on wg-rc5-") || !strings.Contains(f.Title, "20 bytes too large for IPv6") ||
				!strings.Contains(f.Title, "at most 1360 fits") {
				t.Errorf("title %q", f.Title)
			}
			if f.Evidence[0].Value != rule {
				t.Errorf("rule evidence %q, want %q", f.Evidence[0].Value, rule)
			}
			if a := f.Fixes[0].Action; a == nil || a.Kind != remedy.KindMSSClamp || a.Params["mss"] != "pmtu" {
				t.Errorf("first fix %+v, want a clamp to the route MTU", f.Fixes[0])
			}
		}
	}
	noIPv6 := func(s *facts.Snapshot) {
		for i := range s.WireGuard {
			for j := range s.WireGuard[i].Peers {
				var v4 []string
				for _, ip := range s.WireGuard[i].Peers[j].AllowedIPs {
					if !strings.Contains(ip, ":") {
						v4 = append(v4, ip)
					}
				}
				s.WireGuard[i].Peers[j].AllowedIPs = v4
			}
		}
		var routes []facts.Route
		for _, r := range s.Routes {
			if r.Family != "inet6" || !strings.HasPrefix(r.Dev, "wg-") || strings.HasPrefix(r.Dst, "fe80") {
				routes = append(routes, r)
			}
		}
		s.Routes = routes
	}
	runCases(t, &mssClampIPv6, []checkCase{
		{name: "nft table inet, fixed 1380", snap: a, want: sev(warning),
			assert: fired(`oifname "wg-rc5-a" tcp flags syn / syn,rst counter packets 0 bytes 0 tcp option maxseg size set 1380`)},
		{name: "ip6tables fixed 1380 (the iptables rule is IPv4's, and right)", snap: b, want: sev(warning),
			assert: fired("-A FORWARD -o wg-rc5-b -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1380")},
		{name: "the tunnel carries no IPv6 (link-local only)", snap: with(t, a, noIPv6)},
		{name: "a clamp right for IPv6", snap: with(t, a, func(s *facts.Snapshot) {
			for i := range s.Firewall.Rules {
				if s.Firewall.Rules[i].MSSClamp == "1380" {
					s.Firewall.Rules[i].MSSClamp = "1360"
				}
			}
		})},
		{name: "the fixed clamp is IPv4's only (meta nfproto ipv4)", snap: with(t, a, func(s *facts.Snapshot) {
			for i := range s.Firewall.Rules {
				if s.Firewall.Rules[i].MSSClamp == "1380" {
					s.Firewall.Rules[i].Text = "meta nfproto ipv4 " + s.Firewall.Rules[i].Text
				}
			}
		})},
		{name: "a clamp to the route MTU covers IPv6 too", snap: with(t, b, func(s *facts.Snapshot) {
			s.Firewall.Rules = append(s.Firewall.Rules, facts.FirewallRule{Backend: "nft", Family: "inet", Table: "wgperf", Chain: "mss_wg_rc5_b",
				Hook: "postrouting", OIf: "wg-rc5-b", Protocol: "tcp", MSSClamp: "pmtu",
				Text: `oifname "wg-rc5-b" tcp flags syn / syn,rst tcp option maxseg size set rt mtu comment "wgperf mss-clamp wg-rc5-b pmtu"`})
		})},
		{name: "a clamp on another interface", snap: with(t, a, func(s *facts.Snapshot) {
			for i := range s.Firewall.Rules {
				if s.Firewall.Rules[i].MSSClamp == "1380" {
					s.Firewall.Rules[i].OIf = "eth0"
				}
			}
		})},
		{name: "no WireGuard", snap: &facts.Snapshot{Host: targettest.Spec("netns:x"), Firewall: facts.Firewall{Nftables: true}}},
		{name: "firewall not collected", snap: with(t, a, func(s *facts.Snapshot) {
			s.Firewall = facts.Firewall{}
			s.Notes = append(s.Notes, facts.Note{Source: "nft", Message: "nft not installed"})
		}), skip: true},
	})
}
