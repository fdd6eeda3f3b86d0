package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/remedy"
)

// The multi-WAN stale endpoint route case's router, transcribed from its report: the WireGuard endpoint
// pinned to the 5G backup, banIP's ICMP limit with 8951 drops on the fiber.
func TestStaleEndpoint(t *testing.T) {
	golem := loadSnapshot(t, "seed000-golem.json")
	runCases(t, &staleEndpoint, []checkCase{
		{name: "multi-WAN stale endpoint route: pinned to the 5G backup", snap: golem, want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if f.Interface != "wg" || !strings.Contains(f.Title, "46.38.233.77") || !strings.Contains(f.Title, "192.168.253.254") {
				t.Errorf("title/interface: %q %q", f.Title, f.Interface)
			}
			if !strings.Contains(f.Detail, "table 2") {
				t.Errorf("detail should mention mwan3's copy in table 2: %s", f.Detail)
			}
			if f.Evidence[0].Value != "46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static metric 20" ||
				f.Evidence[0].Threshold != "via 192.168.254.254 dev eth1" {
				t.Errorf("evidence %+v", f.Evidence[0])
			}
			// mwan3 status, read as the case read it: the backup's uptime dates
			// the route, the fiber is back, the policy already moved traffic back.
			for _, want := range []string{"has been up since about 2026-02-04 22:31 UTC", "wan (eth1), the preferred uplink, has been online for 60h:53m",
				"policy fiber_5g_backup sends nothing over wan5g"} {
				if !strings.Contains(f.Detail, want) {
					t.Errorf("detail lacks %q: %s", want, f.Detail)
				}
			}
			if got := evidenceOf(f, "uplink wan5g (br-lan.253), pinned"); got == nil || got.Value != "online for 83h:06m, up 1485h:25m (since about 2026-02-04 22:31 UTC)" {
				t.Errorf("pinned uplink evidence %q", got)
			}
			if got := evidenceOf(f, "policy fiber_5g_backup"); got == nil || got.Value != "wan 100%" {
				t.Errorf("policy evidence %q", got)
			}
			fix := f.Fixes[0]
			if fix.Commands[0] != "uci set network.wg.nohostroute=1" || fix.Commands[2] != "ifdown wg && ifup wg" {
				t.Errorf("commands %q", fix.Commands)
			}
			if fix.Action.Kind != remedy.KindEndpointRoute || fix.Action.Params["endpoint"] != "46.38.233.77" ||
				fix.Action.Params["uci_interface"] != "wg" || fix.Action.Params["table"] != "main" {
				t.Errorf("action %+v", fix.Action)
			}
		}},
		{name: "mwan3 status as mwan3 prints it, a balanced policy that still uses the backup", snap: with(t, golem, func(s *facts.Snapshot) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "collect", "openwrt", "mwan3-status-full.txt"))
			if err != nil {
				t.Fatal(err)
			}
			s.OpenWrt.Uplinks, s.OpenWrt.Policies, err = parse.ParseMwan3Status(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
		}), want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if got := evidenceOf(f, "policy balanced"); got == nil || got.Value != "wan 66%, wan5g 33%" {
				t.Errorf("balanced policy evidence %q", got)
			}
			if evidenceOf(f, "policy wan5g_only") != nil {
				t.Errorf("a policy without the preferred uplink is no evidence: %+v", f.Evidence)
			}
			if !strings.Contains(f.Detail, "policy fiber_5g_backup sends nothing over wan5g") || strings.Contains(f.Detail, "balanced sends") {
				t.Errorf("only the policies that left the backup moved traffic back: %s", f.Detail)
			}
		}},
		{name: "netifd dates the route: wg came up before the fiber was back", snap: with(t, golem, func(s *facts.Snapshot) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "collect", "openwrt", "ubus-network-interface-dump.json"))
			if err != nil {
				t.Fatal(err)
			}
			if s.OpenWrt.Interfaces, err = parse.ParseNetifdDump(bytes.NewReader(raw)); err != nil {
				t.Fatal(err)
			}
		}), want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			want := "the WireGuard interface wg came up 1484h:38m ago, before wan was last back (60h:53m ago): netifd pinned the endpoint's route through wan5g then"
			if !strings.Contains(fs[0].Detail, want) {
				t.Errorf("detail lacks %q: %s", want, fs[0].Detail)
			}
			if got := evidenceOf(fs[0], "interface wg up for"); got == nil || got.Value != "1484h:38m" || got.Threshold != "< 60h:53m (since wan is back)" {
				t.Errorf("evidence %+v", got)
			}
		}},
		{name: "wg restarted since the fiber came back: netifd did not make this route then", snap: with(t, golem, func(s *facts.Snapshot) {
			s.OpenWrt.Interfaces = []facts.NetifdInterface{{Name: "wg", Up: true, Uptime: 3600, Device: "wg", Proto: "wireguard"}}
		}), want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			if strings.Contains(fs[0].Detail, "came up") || evidenceOf(fs[0], "interface wg up for") != nil {
				t.Errorf("an interface younger than the fiber's return dated the route: %s", fs[0].Detail)
			}
		}},
		{name: "no mwan3 status: the route alone", snap: with(t, golem, func(s *facts.Snapshot) {
			s.OpenWrt.Uplinks, s.OpenWrt.Policies = nil, nil
		}), want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			if strings.Contains(fs[0].Detail, "mwan3 status") || evidenceOf(fs[0], "uplink wan (eth1), preferred") != nil {
				t.Errorf("mwan3 said nothing, the finding says: %s", fs[0].Detail)
			}
		}},
		{name: "after the fix: no host route", snap: with(t, golem, func(s *facts.Snapshot) {
			var keep []facts.Route
			for _, r := range s.Routes {
				if r.Dst != "46.38.233.77" {
					keep = append(keep, r)
				}
			}
			s.Routes = keep
			s.Endpoints[0].Dev, s.Endpoints[0].Gateway = "eth1", "192.168.254.254"
		})},
		{name: "full tunnel: loop-prevention route via the preferred uplink is fine", snap: with(t, golem, func(s *facts.Snapshot) {
			for i := range s.Routes {
				if s.Routes[i].Dst == "46.38.233.77" {
					s.Routes[i].Gateway, s.Routes[i].Dev, s.Routes[i].Metric = "192.168.254.254", "eth1", 10
				}
			}
			s.Routes = append(s.Routes, facts.Route{Family: "inet", Table: "main", Dst: "0.0.0.0/1", Dev: "wg", Protocol: "static"})
		})},
		{name: "fiber down: the backup is the preferred uplink now", snap: with(t, golem, func(s *facts.Snapshot) {
			for i := range s.Links {
				if s.Links[i].Name == "eth1" {
					s.Links[i].State = "DOWN"
				}
			}
		})},
		{name: "full tunnel pinned to the backup: re-point, not delete", snap: with(t, golem, func(s *facts.Snapshot) {
			s.OpenWrt = nil
			s.Routes = append(s.Routes, facts.Route{Family: "inet", Table: "main", Dst: "0.0.0.0/1", Dev: "wg", Protocol: "static"})
		}), want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			if got := fs[0].Fixes[0].Commands[0]; got != "ip route replace 46.38.233.77 via 192.168.254.254 dev eth1 proto static" {
				t.Errorf("command %q", got)
			}
		}},
		{name: "plain Linux split tunnel: delete the route", snap: with(t, golem, func(s *facts.Snapshot) { s.OpenWrt = nil }), want: sev(critical),
			assert: func(t *testing.T, fs []finding.Finding) {
				if got := fs[0].Fixes[0].Commands[0]; got != "ip route del 46.38.233.77 via 192.168.253.254 dev br-lan.253 table main" {
					t.Errorf("command %q", got)
				}
			}},
		{name: "routes not collected", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Routes = nil
			s.Notes = []facts.Note{{Source: "ip route", Message: "ip: not found"}}
		}), skip: true},
		{name: "BusyBox ip: no route protocols, judged by the gateway", snap: busyBox(t, golem, nil), want: sev(critical),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if !strings.Contains(f.Detail, "BusyBox ip prints no route protocols") || !strings.Contains(f.Detail, "table 2") {
					t.Errorf("detail: %s", f.Detail)
				}
				var proto *finding.Evidence
				for i := range f.Evidence {
					if f.Evidence[i].Key == "route protocol" {
						proto = &f.Evidence[i]
					}
				}
				if proto == nil || !strings.Contains(proto.Threshold, "opkg install ip-full") {
					t.Errorf("no route protocol evidence naming ip-full: %+v", f.Evidence)
				}
				if f.Fixes[0].Commands[0] != "uci set network.wg.nohostroute=1" {
					t.Errorf("commands %q", f.Fixes[0].Commands)
				}
			}},
		{name: "BusyBox ip: after the fix, no host route", snap: busyBox(t, golem, func(s *facts.Snapshot) {
			var keep []facts.Route
			for _, r := range s.Routes {
				if r.Dst != "46.38.233.77" {
					keep = append(keep, r)
				}
			}
			s.Routes = keep
		})},
		{name: "BusyBox ip: host route via the preferred uplink", snap: busyBox(t, golem, func(s *facts.Snapshot) {
			for i := range s.Routes {
				if s.Routes[i].Dst == "46.38.233.77" {
					s.Routes[i].Gateway, s.Routes[i].Dev = "192.168.254.254", "eth1"
				}
			}
		})},
		{name: "BusyBox ip: multipath preferred default, whose hops it does not print", snap: busyBox(t, golem, func(s *facts.Snapshot) {
			for i := range s.Routes {
				if r := &s.Routes[i]; r.Dst == "default" && r.Dev == "eth1" && (r.Table == "main" || r.Table == "") {
					r.Gateway, r.Dev = "", ""
				}
			}
		}), skip: true},
		{name: "ip -j: a host route without proto static is not netifd's", snap: with(t, golem, func(s *facts.Snapshot) {
			for i := range s.Routes {
				if s.Routes[i].Dst == "46.38.233.77" {
					s.Routes[i].Protocol = ""
				}
			}
		})},
	})
}

func TestICMPRateLimitDrops(t *testing.T) {
	golem := loadSnapshot(t, "seed000-golem.json")
	runCases(t, &icmpRateLimitDrops, []checkCase{
		{name: "multi-WAN stale endpoint route: banIP cnt_icmpflood 8951 on eth1", snap: golem, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if !strings.Contains(f.Title, "dropped 8951 packets on eth1") {
				t.Errorf("title %q", f.Title)
			}
			fix := f.Fixes[0]
			if fix.Commands[0] != "uci set banip.global.ban_icmplimit=250" || fix.Action.Kind != remedy.KindICMPLimit ||
				fix.Action.Params["rate"] != "250" || fix.Action.Params["banip"] != "1" {
				t.Errorf("fix %+v %+v", fix.Commands, fix.Action)
			}
		}},
		{name: "counter at zero", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Firewall.Rules[2].Packets = 0
			s.Firewall.Counters[0].Packets = 0
		})},
		{name: "limit on a LAN interface is not an uplink's", snap: with(t, golem, func(s *facts.Snapshot) { s.Firewall.Rules[2].IIf = "br-lan" })},
		{name: "plain nft rule on every interface: nft replace", snap: with(t, golem, func(s *facts.Snapshot) {
			s.OpenWrt = nil
			r := &s.Firewall.Rules[2]
			r.Table, r.Chain, r.Handle, r.IIf, r.CounterName, r.Packets = "filter", "input", 7, "", "", 31
			r.Text = "icmp type echo-reply limit rate over 1/second burst 1 packets counter packets 31 bytes 2604 drop"
			r.Limit = &facts.RateLimit{Rate: 1, Per: "second", Burst: 1, Unit: "packets", Over: true}
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			want := `nft 'replace rule inet filter input handle 7 icmp type echo-reply limit rate over 250/second burst 25 packets counter packets 31 bytes 2604 drop'`
			if got := fs[0].Fixes[0].Commands[0]; got != want {
				t.Errorf("command\n got %s\nwant %s", got, want)
			}
			p := fs[0].Fixes[0].Action.Params
			if p["family"] != "inet" || p["table"] != "filter" || p["chain"] != "input" || p["handle"] != "7" {
				t.Errorf("action params %v", p)
			}
		}},
		{name: "a limit that accepts is not a drop", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Firewall.Rules[2].Limit.Over = false
			s.Firewall.Rules[2].Verdict = "accept"
		})},
		{name: "no firewall collected", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Firewall = facts.Firewall{}
			s.Notes = []facts.Note{{Source: "nft", Message: "nft not installed"}}
		}), skip: true},
	})
}

// The lab's recorded snapshots (wgperf collect from the lab namespaces): a
// healthy site-to-site pair, a pair with WG MTU 1480, the banIP ICMP rule after
// a ping burst and a LAN behind A, and multi-wan A with the endpoint route
// replaced via the backup uplink.
func TestRecordedLabSnapshots(t *testing.T) {
	healthyA, healthyB := loadSnapshot(t, "lab-healthy-a.json"), loadSnapshot(t, "lab-healthy-b.json")
	brokenA, brokenB := loadSnapshot(t, "lab-mtu1480-icmplimit-lan-a.json"), loadSnapshot(t, "lab-mtu1480-icmplimit-lan-b.json")
	stale := loadSnapshot(t, "lab-multiwan-stale-a.json")
	cases := []struct {
		name  string
		snaps []*facts.Snapshot
		want  string // IDs of warning and critical findings, sorted most severe first
	}{
		{"healthy pair", []*facts.Snapshot{healthyA, healthyB}, "[]"},
		{"broken pair", []*facts.Snapshot{brokenA, brokenB},
			"[mtu.tunnel-too-large/critical mtu.tunnel-too-large/critical icmp.ratelimit-drops/warning mtu.mss-clamp-missing/warning]"},
		{"multi-wan, endpoint via the backup", []*facts.Snapshot{stale}, "[route.stale-endpoint/critical]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Run(tc.snaps, Options{})
			var got []finding.Finding
			for _, f := range r.Findings {
				if f.Severity >= finding.Warning {
					got = append(got, f)
				}
			}
			if g := ids(got); strings.Join(g, " ") != strings.Trim(tc.want, "[]") {
				t.Errorf("findings = %v, want %s", g, tc.want)
			}
			if len(r.Skipped) != 0 {
				t.Errorf("skipped %+v", r.Skipped)
			}
		})
	}
}

func TestRecordedLabCases(t *testing.T) {
	healthy := loadSnapshot(t, "lab-healthy-a.json")
	broken := loadSnapshot(t, "lab-mtu1480-icmplimit-lan-a.json")
	runCases(t, &icmpRateLimitDrops, []checkCase{
		{name: "lab: banIP-style rule, 25 replies dropped", snap: broken, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			want := `nft 'replace rule inet banIP pre-routing handle 4 iifname "eth0" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 250/second burst 25 packets counter name "cnt_icmpflood" drop'`
			if got := fs[0].Fixes[0].Commands[0]; got != want {
				t.Errorf("off OpenWrt the rule is edited with nft:\n got %s\nwant %s", got, want)
			}
		}},
		{name: "lab: no firewall rules", snap: healthy},
	})
	runCases(t, &tunnelTooLarge, []checkCase{
		{name: "lab: 1480 over veth 1500", snap: broken, want: sev(critical)},
		{name: "lab: 1420", snap: healthy},
	})
	runCases(t, &mssClampMissing, []checkCase{
		{name: "lab: A forwards lan0 into the tunnel", snap: broken, want: sev(warning)},
		{name: "lab: A does not forward", snap: healthy},
	})
	runCases(t, &staleEndpoint, []checkCase{
		{name: "lab: multi-wan via backup", snap: loadSnapshot(t, "lab-multiwan-stale-a.json"), want: sev(critical)},
		{name: "lab: site-to-site without host route", snap: healthy},
	})
	runCases(t, &wgUserspace, []checkCase{{name: "lab: wireguard-go", snap: healthy, want: sev(info)}})
	runCases(t, &conntrackTunnelTracked, []checkCase{{name: "lab: conntrack loaded, no rules", snap: healthy, want: sev(info)}})
}

// The lab with 3% underlay loss and WireGuard sockets capped at 64 KiB, after a
// 2 s TCP run (BBR, 1276 retransmissions) and a 400 Mbit/s UDP burst.
func TestRecordedLossyLab(t *testing.T) {
	a, b := loadSnapshot(t, "lab-loss3-udpbuf64k-a.json"), loadSnapshot(t, "lab-loss3-udpbuf64k-b.json")
	runCases(t, &udpRcvbufErrors, []checkCase{
		{name: "lab: B's small buffers overflowed", snap: b, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Evidence[0].Value != "1307" {
				t.Errorf("evidence %+v", fs[0].Evidence[0])
			}
		}},
		{name: "lab: A sent, nothing overflowed", snap: a},
	})
	runCases(t, &congestionControl, []checkCase{
		{name: "lab: BBR keeps quiet despite retransmissions", snap: a},
		{name: "lab: the same counters under CUBIC", snap: with(t, a, func(s *facts.Snapshot) {
			s.Sysctls["net.ipv4.tcp_congestion_control"] = "cubic"
		}), want: sev(warning)},
	})
}

// busyBox is snap as collected through BusyBox ip: no route protocols and no
// multipath hops; edit changes it further.
func busyBox(t *testing.T, snap *facts.Snapshot, edit func(*facts.Snapshot)) *facts.Snapshot {
	return with(t, snap, func(s *facts.Snapshot) {
		s.IPText = true
		for i := range s.Routes {
			s.Routes[i].Protocol, s.Routes[i].Nexthops = "", nil
		}
		if edit != nil {
			edit(s)
		}
	})
}
