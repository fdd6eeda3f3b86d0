package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/remedy"
)

func TestTunnelTooLarge(t *testing.T) {
	h := healthyHost()
	runCases(t, &tunnelTooLarge, []checkCase{
		{name: "1420 over a 1500 IPv4 uplink fits", snap: h},
		{name: "PPPoE 1492 uplink: 1420 + 60 fits", snap: with(t, h, func(s *facts.Snapshot) { s.Links[1].MTU = 1492 })},
		{name: "userspace: 1480 over a 1500 IPv4 uplink stalls", snap: with(t, withUserspace(t, h), func(s *facts.Snapshot) { s.WireGuard[0].MTU = 1480 }),
			want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
				if !strings.Contains(fs[0].Detail, "is refused") {
					t.Errorf("detail %q: want the DF refusal of a userspace implementation", fs[0].Detail)
				}
			}},
		{name: "unknown implementation: fragmented or dropped", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard[0].MTU, s.WireGuard[0].Implementation = 1480, ""
		}), want: sev(critical)},
		{name: "kernel: 1480 over a 1500 IPv4 uplink fragments", snap: with(t, h, func(s *facts.Snapshot) { s.WireGuard[0].MTU = 1480 }), want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if !strings.Contains(f.Detail, "two fragments") {
					t.Errorf("detail %q: want the kernel's fragmentation", f.Detail)
				}
				if f.Evidence[0].Threshold != "<= 1440 (eth0 mtu 1500 − 60 IPv4 overhead)" {
					t.Errorf("threshold %q", f.Evidence[0].Threshold)
				}
				fix := f.Fixes[0]
				if fix.Commands[0] != "ip link set dev wg0 mtu 1440" || fix.Config[0].Lines[0] != "MTU = 1440" ||
					fix.Config[0].Path != "/etc/wireguard/wg0.conf [Interface]" {
					t.Errorf("fix %+v", fix)
				}
				if fix.Action.Kind != remedy.KindWGMTU || fix.Action.Params["interface"] != "wg0" || fix.Action.Params["mtu"] != "1440" {
					t.Errorf("action %+v", fix.Action)
				}
			}},
		{name: "IPv6 endpoint costs 80: 1440 over 1500 is too large", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard[0].MTU = 1440
			s.Endpoints[0].Endpoint = "2001:db8::2"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if !strings.Contains(fs[0].Evidence[0].Threshold, "80 IPv6 overhead") || fs[0].Fixes[0].Action.Params["mtu"] != "1420" {
				t.Errorf("evidence %+v action %+v", fs[0].Evidence[0], fs[0].Fixes[0].Action)
			}
		}},
		{name: "narrow 1400 uplink on OpenWrt: uci too", snap: with(t, h, func(s *facts.Snapshot) {
			s.Links[1].MTU = 1400
			s.OpenWrt = &facts.OpenWrt{Network: map[string]string{"network.wg0": "interface", "network.wg0.proto": "wireguard"}}
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			cmds := strings.Join(fs[0].Fixes[0].Commands, "; ")
			if cmds != "ip link set dev wg0 mtu 1340; uci set network.wg0.mtu=1340; uci commit network" {
				t.Errorf("commands %q", cmds)
			}
		}},
		{name: "no peer with an endpoint", snap: with(t, h, func(s *facts.Snapshot) { s.Endpoints = nil })},
		{name: "endpoint routes failed", snap: with(t, h, func(s *facts.Snapshot) {
			s.Endpoints = nil
			s.Notes = []facts.Note{{Source: "ip route get 203.0.113.2", Message: "RTNETLINK answers: Network is unreachable"}}
		}), skip: true},
	})
}

func TestMSSClampMissing(t *testing.T) {
	h := healthyHost()
	noClamp := with(t, h, func(s *facts.Snapshot) { s.Firewall.Rules = nil })
	runCases(t, &mssClampMissing, []checkCase{
		{name: "clamp rule on oifname wg0", snap: h},
		{name: "router without a clamp", snap: noClamp, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			fix := fs[0].Fixes[0]
			want := []string{
				"nft add table inet wgperf",
				"nft 'add chain inet wgperf mss_wg0 { type filter hook postrouting priority mangle; policy accept; }'",
				`nft 'add rule inet wgperf mss_wg0 oifname "wg0" tcp flags syn / syn,rst tcp option maxseg size set rt mtu comment "wgperf mss-clamp wg0 pmtu"'`,
			}
			for i, w := range want {
				if fix.Commands[i] != w {
					t.Errorf("command %d = %s, want %s", i, fix.Commands[i], w)
				}
			}
			if fix.Action.Kind != remedy.KindMSSClamp || fix.Action.Params["oif"] != "wg0" || fix.Action.Params["mss"] != "pmtu" {
				t.Errorf("action %+v", fix.Action)
			}
			if !strings.Contains(fs[0].Title, "eth1 MTU 1500") {
				t.Errorf("title %q", fs[0].Title)
			}
		}},
		{name: "forwarding but no LAN: only the uplink", snap: with(t, noClamp, func(s *facts.Snapshot) { s.Links[2].State = "DOWN" })},
		{name: "VPN server NATing its clients out of the uplink", snap: with(t, noClamp, func(s *facts.Snapshot) {
			s.Links[2].State = "DOWN"
			s.Firewall.Rules = []facts.FirewallRule{{Backend: "nft", Family: "ip", Table: "nat", Chain: "postrouting", Hook: "postrouting",
				OIf: "eth0", Text: `oifname "eth0" masquerade`, Verdict: "masquerade"}}
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if !strings.Contains(fs[0].Title, "eth0 MTU 1500") {
				t.Errorf("title %q", fs[0].Title)
			}
		}},
		{name: "not forwarding", snap: with(t, noClamp, func(s *facts.Snapshot) { s.Sysctls["net.ipv4.ip_forward"] = "0" })},
		{name: "tunnel MTU equals the LAN's", snap: with(t, noClamp, func(s *facts.Snapshot) {
			for i := range s.Links {
				s.Links[i].MTU = min(s.Links[i].MTU, 1420)
			}
		})},
		{name: "iptables TCPMSS on FORWARD for all interfaces", snap: with(t, noClamp, func(s *facts.Snapshot) {
			s.Firewall.Iptables = true
			s.Firewall.Rules = []facts.FirewallRule{{Backend: "iptables", Family: "ip", Table: "mangle", Chain: "FORWARD",
				Text: "-A FORWARD -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu", Protocol: "tcp", MSSClamp: "pmtu"}}
		})},
		{name: "a clamp for another tunnel does not count", snap: with(t, noClamp, func(s *facts.Snapshot) {
			s.Firewall.Rules = []facts.FirewallRule{{Backend: "nft", Family: "inet", Table: "filter", Chain: "fwd", Hook: "forward", OIf: "wg1", MSSClamp: "pmtu"}}
		}), want: sev(warning)},
		{name: "wildcard oifname wg* covers wg0", snap: with(t, noClamp, func(s *facts.Snapshot) {
			s.Firewall.Rules = []facts.FirewallRule{{Backend: "nft", Family: "inet", Table: "filter", Chain: "fwd", Hook: "forward", OIf: "wg*", MSSClamp: "1380"}}
		})},
		{name: "firewall unreadable", snap: with(t, noClamp, func(s *facts.Snapshot) {
			s.Firewall = facts.Firewall{}
			s.Notes = []facts.Note{{Source: "nft", Message: "Operation not permitted"}}
		}), skip: true},
		{name: "sysctls missing", snap: with(t, h, func(s *facts.Snapshot) { s.Sysctls = nil }), skip: true},
	})
}

// WireGuard over IPsec, as the ICMP-less site-to-site case layered them: the
// host's IPsec policies and security associations as ip xfrm printed them in
// the kernel guest (keys cut as collect cuts them), for endpoints in each.
func TestTunnelTooLargeOverIPsec(t *testing.T) {
	ipsec := recordedIPsec(t)
	h := with(t, healthyHost(), func(s *facts.Snapshot) { s.IPsec = ipsec })
	to := func(endpoint string, port string) *facts.Snapshot {
		return with(t, h, func(s *facts.Snapshot) {
			s.Endpoints[0].Endpoint = endpoint
			s.WireGuard[0].Peers[0].Endpoint = endpoint + ":" + port
		})
	}
	allowed := func(endpoint string, want int, what string) func(*testing.T, []finding.Finding) {
		return func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if got := f.Fixes[0].Action.Params["mtu"]; got != strconv.Itoa(want) {
				t.Errorf("MTU proposed %s, want %d", got, want)
			}
			ev := evidenceOf(f, "IPsec on the way to "+endpoint)
			if ev == nil || !strings.Contains(ev.Value, what) || int(ev.Number) != 1500-60-want {
				t.Errorf("IPsec evidence %+v, want %q and %d bytes", ev, what, 1500-60-want)
			}
			if !strings.Contains(f.Detail, "and IPsec (") {
				t.Errorf("detail does not name IPsec: %s", f.Detail)
			}
		}
	}
	runCases(t, &tunnelTooLarge, []checkCase{
		{name: "recorded: kernel WireGuard in the guest, its peer behind an ESP tunnel mode policy", snap: loadSnapshot(t, "guest-ipsec-a.json"), want: sev(warning),
			assert: allowed("203.0.113.2", 1363, "ESP tunnel mode to 203.0.113.2, cbc(aes) + hmac(sha256) with a 128-bit ICV")},
		{name: "ESP tunnel mode, cbc(aes) + hmac(sha256): 77 bytes more, 1420 is too large", snap: to("203.0.113.2", "51820"), want: sev(warning),
			assert: allowed("203.0.113.2", 1363, "ESP tunnel mode to 203.0.113.2, cbc(aes) + hmac(sha256) with a 128-bit ICV")},
		{name: "the policy selects WireGuard's port: AES-GCM with NAT-T, 65 bytes", snap: to("203.0.113.3", "51820"), want: sev(warning),
			assert: allowed("203.0.113.3", 1375, "rfc4106(gcm(aes)) with a 128-bit ICV, NAT-T")},
		{name: "the same policy on another port selects nothing: 1420 fits", snap: to("203.0.113.3", "51821")},
		{name: "transport mode, ChaCha20-Poly1305: 37 bytes, no outer header", snap: to("203.0.113.4", "51820"), want: sev(warning),
			assert: allowed("203.0.113.4", 1403, "ESP transport mode, rfc7539esp(chacha20,poly1305)")},
		{name: "a policy for another source address selects nothing", snap: with(t, to("203.0.113.4", "51820"), func(s *facts.Snapshot) {
			s.Endpoints[0].Src = "198.51.100.9"
		})},
		{name: "a block policy is not a layer; no policy, no layer", snap: to("192.0.2.9", "51820")},
		{name: "its security association unreadable: the largest common suite", snap: with(t, to("203.0.113.2", "51820"), func(s *facts.Snapshot) {
			s.IPsec.States = []facts.XfrmState{}
		}), want: sev(warning), assert: allowed("203.0.113.2", 1363, "its algorithms not seen")},
		{name: "an MTU that leaves room for IPsec stays quiet", snap: with(t, to("203.0.113.2", "51820"), func(s *facts.Snapshot) {
			s.WireGuard[0].MTU = 1360
		})},
	})
}

// recordedIPsec reads the guest's ip xfrm outputs as collect reads them.
func recordedIPsec(t *testing.T) *facts.IPsec {
	t.Helper()
	read := func(name string) *bytes.Reader {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "collect", "xfrm", name))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.NewReader(b)
	}
	policies, err := parse.ParseXfrmPolicy(read("policy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	states, err := parse.ParseXfrmState(read("state.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return &facts.IPsec{Policies: policies, States: states}
}
