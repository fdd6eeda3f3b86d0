package check

import (
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/testutil"
)

func TestUDPRcvbufErrors(t *testing.T) {
	// The relay case's NAS ran WireGuard in userspace (Synology DSM 7): its
	// socket is the tunnel's, and its buffers are the host's to raise.
	h := withUserspace(t, healthyHost())
	kernel := healthyHost()
	runCases(t, &udpRcvbufErrors, []checkCase{
		{name: "no errors", snap: h},
		{name: "relay case: receive errors with 208 KiB rmem_max", snap: with(t, h, func(s *facts.Snapshot) { s.Counters.SNMP["Udp"]["RcvbufErrors"] = 9312 }),
			want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if len(f.Fixes) != 2 || f.Fixes[0].Commands[0] != "sysctl -w net.core.rmem_max=26214400" ||
					f.Fixes[0].Config[0].Path != "/etc/sysctl.d/90-wgperf.conf" || f.Fixes[0].Config[0].Lines[0] != "net.core.rmem_max = 26214400" {
					t.Errorf("fixes %+v", f.Fixes)
				}
				a := f.Fixes[1].Action
				if a.Kind != remedy.KindSysctl || a.Params["key"] != "net.core.rmem_default" || a.Params["value"] != "26214400" {
					t.Errorf("action %+v", a)
				}
			}},
		{name: "userspace: the tunnel's own socket dropped", snap: with(t, h, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["RcvbufErrors"] = 9312
			s.UDPSockets = []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Drops: 9300, Inode: 7}, {Family: "inet", LocalPort: 53, Drops: 12, Inode: 8}}
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			last := fs[0].Evidence[2]
			if last.Key != "drops of the tunnel's socket" || last.Value != "9300" || fs[0].Fixes[0].Action == nil {
				t.Errorf("evidence %+v fixes %+v", last, fs[0].Fixes)
			}
		}},
		{name: "userspace: only another socket dropped (a measurement's own)", snap: with(t, h, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["RcvbufErrors"] = 197
			s.UDPSockets = []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 7}, {Family: "inet", LocalPort: 5201, Drops: 197, Inode: 9}}
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if !strings.Contains(fs[0].Detail, "port 5201: 197") || fs[0].Fixes[0].Action != nil {
				t.Errorf("detail %q fixes %+v: want the socket named and no buffer to raise", fs[0].Detail, fs[0].Fixes)
			}
		}},
		{name: "kernel WireGuard: never the tunnel's, never an rmem fix", snap: with(t, kernel, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["RcvbufErrors"] = 9312
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if !strings.Contains(f.Detail, "encapsulation hook") || len(f.Fixes) != 1 || f.Fixes[0].Action != nil {
				t.Errorf("detail %q fixes %+v", f.Detail, f.Fixes)
			}
		}},
		{name: "kernel WireGuard: iperf3's test socket overflowed", snap: with(t, kernel, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["RcvbufErrors"] = 197
			s.UDPSockets = []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 7}, {Family: "inet", LocalPort: 5201, Drops: 197, Inode: 9}}
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if !strings.Contains(fs[0].Detail, "port 5201: 197") {
				t.Errorf("detail %q", fs[0].Detail)
			}
		}},
		{name: "buffers already large: point at the CPU", snap: with(t, h, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["SndbufErrors"] = 3
			s.Sysctls["net.core.wmem_max"], s.Sysctls["net.core.wmem_default"] = "33554432", "33554432"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Fixes[0].Action != nil || !strings.Contains(fs[0].Detail, "not draining") {
				t.Errorf("fix %+v detail %q", fs[0].Fixes[0], fs[0].Detail)
			}
		}},
		{name: "send errors behind a shaped uplink are the queue, not wmem", snap: with(t, h, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["SndbufErrors"] = 1385
			s.Links = append(s.Links, facts.Link{Name: "wan5g", MTU: 1500, Qdisc: "tbf", State: "UP"})
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			last := fs[0].Evidence[len(fs[0].Evidence)-1]
			if last.Key != "qdisc of wan5g" || last.Value != "tbf" || fs[0].Fixes[0].Action != nil {
				t.Errorf("evidence %+v fixes %+v", last, fs[0].Fixes)
			}
		}},
		{name: "receive errors on a shaped host still warn", snap: with(t, h, func(s *facts.Snapshot) {
			s.Counters.SNMP["Udp"]["RcvbufErrors"] = 10
			s.Links = append(s.Links, facts.Link{Name: "wan5g", MTU: 1500, Qdisc: "tbf", State: "UP"})
		}), want: sev(warning)},
		{name: "snmp unreadable", snap: with(t, h, func(s *facts.Snapshot) { s.Counters = facts.Counters{} }), skip: true},
	})
}

// withUserspace makes a host's WireGuard interface a userspace one (a TUN
// served by wireguard-go or a vendor daemon).
func withUserspace(t *testing.T, s *facts.Snapshot) *facts.Snapshot {
	return with(t, s, func(s *facts.Snapshot) {
		s.WireGuard[0].Implementation = "userspace"
		for i := range s.Links {
			if s.Links[i].Name == s.WireGuard[0].Name {
				s.Links[i].Kind = "tun"
			}
		}
	})
}

func TestBacklogDrops(t *testing.T) {
	h := healthyHost()
	runCases(t, &backlogDrops, []checkCase{
		{name: "nothing dropped", snap: h},
		{name: "drops on cpu2 since boot: a note", snap: with(t, h, func(s *facts.Snapshot) { s.Softnet[2].Dropped = 412 }), want: sev(info),
			assert: func(t *testing.T, fs []finding.Finding) {
				if fs[0].Evidence[0].Value != "412 (cpu2=412)" || fs[0].Fixes[0].Commands[0] != "sysctl -w net.core.netdev_max_backlog=5000" {
					t.Errorf("evidence %+v fix %+v", fs[0].Evidence[0], fs[0].Fixes[0].Commands)
				}
			}},
		{name: "already 5000: double it", snap: with(t, h, func(s *facts.Snapshot) {
			s.Softnet[0].Dropped = 1
			s.Sysctls["net.core.netdev_max_backlog"] = "5000"
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Fixes[0].Action.Params["value"] != "10000" {
				t.Errorf("action %+v", fs[0].Fixes[0].Action)
			}
		}},
		{name: "a namespace without the sysctl: the note, the machine's command, no action", snap: with(t, h, func(s *facts.Snapshot) {
			s.Softnet[1].Dropped = 7
			delete(s.Sysctls, "net.core.netdev_max_backlog")
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if x := fs[0].Fixes; len(x) != 1 || x[0].Action != nil || x[0].Commands[0] != "sysctl -w net.core.netdev_max_backlog=5000" {
				t.Errorf("fixes %+v, want the machine's command and no action", x)
			}
		}},
		{name: "softnet missing", snap: with(t, h, func(s *facts.Snapshot) { s.Softnet = nil }), skip: true},
	})
}

func TestSoftirqImbalance(t *testing.T) {
	h := healthyHost()
	// The relay case: 33.7K packets/s on CPU 2 against 3-5K on the others.
	relayNAS := with(t, h, func(s *facts.Snapshot) {
		s.Softnet = []facts.SoftnetCPU{{CPU: 0, Processed: 3000000}, {CPU: 1, Processed: 5000000},
			{CPU: 2, Processed: 33700000, TimeSqueeze: 5210}, {CPU: 3, Processed: 4000000}}
	})
	runCases(t, &softirqImbalance, []checkCase{
		{name: "balanced", snap: h},
		{name: "relay case: CPU 2 does the work and runs out of budget", snap: relayNAS, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if !strings.Contains(f.Title, "CPU 2") {
				t.Errorf("title %q", f.Title)
			}
			if len(f.Fixes) != 1 || f.Fixes[0].Action.Kind != remedy.KindRPS || f.Fixes[0].Action.Params["device"] != "eth0" || f.Fixes[0].Action.Params["mask"] != "f" {
				t.Errorf("fixes %+v", f.Fixes)
			}
		}},
		{name: "imbalanced but never squeezed: info", snap: with(t, relayNAS, func(s *facts.Snapshot) { s.Softnet[2].TimeSqueeze = 0 }), want: sev(info)},
		{name: "idle host: too few packets to judge", snap: with(t, h, func(s *facts.Snapshot) {
			s.Softnet = []facts.SoftnetCPU{{CPU: 0, Processed: 9000}, {CPU: 1, Processed: 10}}
		})},
		{name: "single CPU", snap: with(t, h, func(s *facts.Snapshot) { s.Softnet = s.Softnet[:1] })},
		{name: "softnet missing", snap: with(t, h, func(s *facts.Snapshot) { s.Softnet = nil }), skip: true},
	})
	for n, want := range map[int]string{1: "1", 2: "3", 4: "f", 6: "3f", 12: "fff", 40: "ff,ffffffff"} {
		if got := cpuMask(n); got != want {
			t.Errorf("cpuMask(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCongestionControl(t *testing.T) {
	h := healthyHost()
	lossy := func(s *facts.Snapshot) { s.Counters.SNMP["Tcp"]["RetransSegs"] = 25000 } // 5% of 500000
	runCases(t, &congestionControl, []checkCase{
		{name: "bbr with loss", snap: with(t, h, lossy)},
		{name: "cubic without loss", snap: with(t, h, func(s *facts.Snapshot) { s.Sysctls["net.ipv4.tcp_congestion_control"] = "cubic" })},
		{name: "cubic with 5% retransmissions", snap: with(t, h, func(s *facts.Snapshot) {
			lossy(s)
			s.Sysctls["net.ipv4.tcp_congestion_control"] = "cubic"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			fix := fs[0].Fixes[0]
			if fix.Commands[0] != "sysctl -w net.ipv4.tcp_congestion_control=bbr" || fix.Action.Kind != remedy.KindCongestion || fix.Action.Params["algorithm"] != "bbr" {
				t.Errorf("fix %+v", fix)
			}
			if fs[0].Evidence[1].Value != "25000/500000 = 5.00%" {
				t.Errorf("evidence %+v", fs[0].Evidence[1])
			}
		}},
		{name: "reno on 4.19 without bbr loaded: modprobe and fq", snap: with(t, h, func(s *facts.Snapshot) {
			lossy(s)
			s.Sysctls["net.ipv4.tcp_congestion_control"] = "reno"
			s.Sysctls["net.ipv4.tcp_available_congestion_control"] = "reno cubic"
			s.System.Kernel = "4.19.0-26-amd64"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			got := strings.Join(fs[0].Fixes[0].Commands, "; ")
			if got != "modprobe tcp_bbr; sysctl -w net.ipv4.tcp_congestion_control=bbr; sysctl -w net.core.default_qdisc=fq" {
				t.Errorf("commands %q", got)
			}
		}},
		{name: "too little traffic to judge", snap: with(t, h, func(s *facts.Snapshot) {
			s.Sysctls["net.ipv4.tcp_congestion_control"] = "cubic"
			s.Counters.SNMP["Tcp"] = map[string]int64{"OutSegs": 200, "RetransSegs": 50}
		})},
		{name: "sysctl missing", snap: with(t, h, func(s *facts.Snapshot) { delete(s.Sysctls, "net.ipv4.tcp_congestion_control") }), skip: true},
	})
}

func TestBuffersSmall(t *testing.T) {
	h := healthyHost()
	runCases(t, &buffersSmall, []checkCase{
		{name: "defaults cover 1 Gbit/s × 20 ms", snap: h},
		{name: "10 Gbit/s × 20 ms needs 25 MB", snap: h, opts: Options{PathRateMbit: 10000, PathRTT: 20 * time.Millisecond}, want: sev(warning, warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				e := fs[0].Evidence[0]
				if e.Key != "net.ipv4.tcp_rmem" || e.Threshold != "max >= 25000000 bytes (BDP of 10000 Mbit/s × 20ms)" {
					t.Errorf("evidence %+v", e)
				}
				if got := fs[0].Fixes[0].Action.Params["value"]; got != "4096 131072 50331648" {
					t.Errorf("new tcp_rmem %q", got)
				}
			}},
		{name: "small rmem at the default path", snap: with(t, h, func(s *facts.Snapshot) { s.Sysctls["net.ipv4.tcp_rmem"] = "4096 87380 1048576" }), want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				if !strings.Contains(fs[0].Detail, "419 Mbit/s") {
					t.Errorf("detail %q", fs[0].Detail)
				}
			}},
		{name: "sysctls missing", snap: with(t, h, func(s *facts.Snapshot) { s.Sysctls = map[string]string{} }), skip: true},
	})
}

func TestConntrackTablePressure(t *testing.T) {
	h := with(t, healthyHost(), func(s *facts.Snapshot) { s.Conntrack = &facts.Conntrack{Count: 1200, Max: 65536, Buckets: 16384} })
	runCases(t, &conntrackTablePressure, []checkCase{
		{name: "plenty of room", snap: h},
		{name: "not loaded", snap: healthyHost()},
		{name: "85% full", snap: with(t, h, func(s *facts.Snapshot) { s.Conntrack.Count, s.Conntrack.Max = 218, 256 }), want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if f.Fixes[0].Action.Params["key"] != "net.netfilter.nf_conntrack_max" || f.Fixes[0].Action.Params["value"] != "262144" {
					t.Errorf("fix %+v", f.Fixes[0].Action)
				}
				if len(f.Fixes) != 2 || f.Fixes[1].Action.Kind != remedy.KindNoTrack {
					t.Errorf("want a notrack fix for wg0: %+v", f.Fixes)
				}
			}},
		{name: "full: critical", snap: with(t, h, func(s *facts.Snapshot) { s.Conntrack.Count, s.Conntrack.Max, s.Conntrack.Drop = 256, 256, 17 }), want: sev(critical)},
		{name: "early drops with room to spare", snap: with(t, h, func(s *facts.Snapshot) { s.Conntrack.EarlyDrop = 3 }), want: sev(warning)},
		{name: "conntrack unreadable", snap: with(t, healthyHost(), func(s *facts.Snapshot) {
			s.Notes = []facts.Note{{Source: "conntrack", Message: "conntrack not installed"}}
		}), skip: true},
	})
}

func TestConntrackTunnelTracked(t *testing.T) {
	h := with(t, healthyHost(), func(s *facts.Snapshot) { s.Conntrack = &facts.Conntrack{Count: 12, Max: 65536} })
	runCases(t, &conntrackTunnelTracked, []checkCase{
		{name: "tracked, no NAT", snap: h, want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			a := fs[0].Fixes[0].Action
			if a.Kind != remedy.KindNoTrack || a.Params["interface"] != "wg0" || a.Params["port"] != "51820" {
				t.Errorf("action %+v", a)
			}
		}},
		{name: "conntrack not loaded", snap: healthyHost()},
		{name: "notrack already there", snap: with(t, h, func(s *facts.Snapshot) {
			s.Firewall.Rules = append(s.Firewall.Rules, facts.FirewallRule{Backend: "nft", Family: "inet", Table: "raw", Chain: "prerouting",
				Hook: "prerouting", IIf: "wg0", Text: `iifname "wg0" notrack`, NoTrack: true})
		})},
		{name: "masquerade on every interface needs tracking", snap: with(t, h, func(s *facts.Snapshot) {
			s.Firewall.Rules = append(s.Firewall.Rules, facts.FirewallRule{Backend: "nft", Family: "ip", Table: "nat", Chain: "postrouting",
				Hook: "postrouting", Text: "masquerade", Verdict: "masquerade"})
		})},
		{name: "masquerade out of wg0", snap: with(t, h, func(s *facts.Snapshot) {
			s.Firewall.Rules = append(s.Firewall.Rules, facts.FirewallRule{Backend: "iptables", Family: "ip", Table: "nat", Chain: "POSTROUTING",
				OIf: "wg0", Text: "-A POSTROUTING -o wg0 -j MASQUERADE", Verdict: "MASQUERADE"})
		})},
		{name: "firewall unreadable", snap: with(t, h, func(s *facts.Snapshot) {
			s.Firewall = facts.Firewall{}
			s.Notes = []facts.Note{{Source: "nft", Message: "nft not installed"}}
		}), skip: true},
		// NOTRACK makes the tunnel's packets "untracked": a stateful filter
		// that drops what is not established would drop them.
		{name: "a stateful filter with a drop policy needs tracking", snap: with(t, h, statefulInput("drop", ""))},
		{name: "a stateful filter that rejects the rest needs tracking", snap: with(t, h, statefulInput("accept", "reject"))},
		{name: "an accept of established packets in a chain that accepts the rest does not",
			snap: with(t, h, statefulInput("accept", "")), want: sev(info)},
	})
}

// statefulInput adds an input chain that accepts established packets, with
// the given policy and, unless "", a last rule of that verdict for everything.
func statefulInput(policy, last string) func(s *facts.Snapshot) {
	return func(s *facts.Snapshot) {
		fw := &s.Firewall
		fw.Chains = append(fw.Chains, facts.FirewallChain{Backend: "nft", Family: "inet", Table: "filter", Name: "input", Hook: "input", Policy: policy})
		fw.Rules = append(fw.Rules, facts.FirewallRule{Backend: "nft", Family: "inet", Table: "filter", Chain: "input", Hook: "input", Handle: 3,
			Text: "ct state established,related accept", Verdict: "accept"})
		if last != "" {
			fw.Rules = append(fw.Rules, facts.FirewallRule{Backend: "nft", Family: "inet", Table: "filter", Chain: "input", Hook: "input", Handle: 4,
				Text: last, Verdict: last})
		}
	}
}

func TestBondHashPolicy(t *testing.T) {
	// The ECMP-over-bonding case: three 1G ports in an LACP bond carrying the tunnel.
	bonded := with(t, healthyHost(), func(s *facts.Snapshot) {
		s.Links = append(s.Links, facts.Link{Name: "bond0", MTU: 1500, Kind: "bond", State: "UP",
			Bond: &facts.Bond{Mode: "802.3ad 4", XmitHashPolicy: "layer2 0", Slaves: []string{"eno1", "eno2", "eno3"}}})
		s.Routes[0].Dev = "bond0"
		s.Endpoints[0].Dev = "bond0"
	})
	runCases(t, &bondHashPolicy, []checkCase{
		{name: "no bond", snap: healthyHost()},
		{name: "ECMP over bonding: layer2 on the uplink bond", snap: bonded, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			fix := fs[0].Fixes[0]
			if fix.Commands[0] != "ip link set dev bond0 type bond xmit_hash_policy layer3+4" || fix.Action.Kind != remedy.KindBondHash ||
				fix.Action.Params["bond"] != "bond0" || fix.Action.Params["policy"] != "layer3+4" {
				t.Errorf("fix %+v", fix)
			}
			// The bonding documentation's caveat on the cure, as the case quoted it.
			if !strings.Contains(fs[0].Detail, "not fully 802.3ad compliant") || !strings.Contains(fs[0].Detail, "out of order") {
				t.Errorf("detail %q does not say layer3+4 may reorder fragments", fs[0].Detail)
			}
		}},
		{name: "layer3+4 already", snap: with(t, bonded, func(s *facts.Snapshot) { s.Links[4].Bond.XmitHashPolicy = "layer3+4 1" })},
		{name: "active-backup does not hash", snap: with(t, bonded, func(s *facts.Snapshot) { s.Links[4].Bond.Mode = "active-backup 1" })},
		{name: "LAN-side bond: info", snap: with(t, bonded, func(s *facts.Snapshot) {
			s.Routes[0].Dev = "eth0"
			s.Endpoints[0].Dev = "eth0"
		}), want: sev(info)},
		{name: "links missing", snap: with(t, bonded, func(s *facts.Snapshot) { s.Links = nil }), skip: true},
	})
}

func TestHandshakeStale(t *testing.T) {
	h := healthyHost()
	runCases(t, &wgHandshakeStale, []checkCase{
		{name: "40 s ago", snap: h},
		{name: "10 min ago with keepalive", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard[0].Peers[0].LatestHandshake = testNow.Add(-10 * time.Minute)
		}), want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Evidence[0].Value != "10m0s ago" || fs[0].Peer != h.WireGuard[0].Peers[0].PublicKey {
				t.Errorf("evidence %+v peer %q", fs[0].Evidence[0], fs[0].Peer)
			}
			if fs[0].Fixes[0].Commands[1] != "ip route get 203.0.113.2" {
				t.Errorf("commands %q", fs[0].Fixes[0].Commands)
			}
		}},
		{name: "never, data sent", snap: with(t, h, func(s *facts.Snapshot) {
			p := &s.WireGuard[0].Peers[0]
			p.LatestHandshake, p.PersistentKeepalive, p.RxBytes, p.TxBytes = time.Time{}, 0, 0, 1480
		}), want: sev(critical)},
		{name: "idle peer without keepalive: info", snap: with(t, h, func(s *facts.Snapshot) {
			p := &s.WireGuard[0].Peers[0]
			p.LatestHandshake, p.PersistentKeepalive = testNow.Add(-time.Hour), 0
		}), want: sev(info)},
		{name: "roaming peer without endpoint", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard[0].Peers[0].Endpoint = ""
			s.WireGuard[0].Peers[0].LatestHandshake = time.Time{}
		})},
		{name: "Options.Now overrides the snapshot time", snap: h, opts: Options{Now: testNow.Add(time.Hour)}, want: sev(critical)},
		{name: "a hub: its 998 offline road warriors are two findings, the live spokes none", snap: hubSnapshot(t, 998), want: sev(critical, info),
			assert: func(t *testing.T, fs []finding.Finding) { assertHubStale(t, fs, 998) }},
		{name: "a hub whose one down peer is named as a site-to-site end's", snap: hubSnapshot(t, 5), want: sev(critical, info),
			assert: func(t *testing.T, fs []finding.Finding) {
				// Peer 0 keeps a keepalive (down); 1-4 are idle.
				if fs[0].Peer != testutil.HubPeer(0).Key || !strings.HasPrefix(fs[0].Title, "Latest handshake with peer "+testutil.HubPeer(0).Key[:8]+"… (198.18.0.1:1024) was 4m0s ago") {
					t.Errorf("one down peer: peer %q, title %q", fs[0].Peer, fs[0].Title)
				}
				if fs[1].Peer != "" || fs[1].Title != "4 idle peers of wg-mpeer-r have no handshake within 3m0s (newest 5m37s ago, oldest 10m28s ago)" {
					t.Errorf("four idle peers: peer %q, title %q", fs[1].Peer, fs[1].Title)
				}
			}},
		{name: "no WireGuard on this host", snap: with(t, h, func(s *facts.Snapshot) { s.WireGuard = nil })},
		{name: "wg show failed", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard = nil
			s.Notes = []facts.Note{{Source: "wg show", Message: "wg not installed"}}
		}), skip: true},
	})
}

func TestUserspace(t *testing.T) {
	h := healthyHost()
	runCases(t, &wgUserspace, []checkCase{
		{name: "kernel", snap: h},
		{name: "wireguard-go on a tun", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard[0].Implementation = "userspace"
			s.Links[3].Kind = "tun"
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Evidence[0].Value != "tun" {
				t.Errorf("evidence %+v", fs[0].Evidence)
			}
		}},
		{name: "wg show failed", snap: with(t, h, func(s *facts.Snapshot) {
			s.WireGuard = nil
			s.Notes = []facts.Note{{Source: "wg show", Message: "Unable to access interface: Operation not permitted"}}
		}), skip: true},
	})
}
