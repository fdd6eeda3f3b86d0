package bench

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// recordedHost answers TakeSample's reads (files and commands) from outputs
// recorded on a lab node (path or command line -> file in testdata/probe);
// what was not recorded is "not installed".
func recordedHost(t *testing.T, name string, outputs map[string]string) *targettest.Host {
	t.Helper()
	h := targettest.New(name)
	for key, file := range outputs {
		b, err := os.ReadFile(testdata(file))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(key, "/") {
			h.Files[key] = string(b)
		} else {
			h.On(key, string(b))
		}
	}
	return h
}

// recordedDelta samples h before and after, each answered from its own recordings.
func recordedDelta(t *testing.T, name string, before, after map[string]string) HostDelta {
	t.Helper()
	ctx := context.Background()
	return Delta(End{Host: targettest.Spec(name)}, TakeSample(ctx, recordedHost(t, name, before), Baseline), TakeSample(ctx, recordedHost(t, name, after), Named))
}

// The sample before a run reads counters only; the one after it also reads
// the rules' texts, which name what grew.
func TestBaselineSkipsRuleTexts(t *testing.T) {
	outputs := map[string]string{"nft -j list ruleset": "counters/drop-b-before.nft.json", "nft -a list ruleset": "counters/drop-b-after.nft.txt"}
	for _, tt := range []struct {
		named bool
		texts bool
	}{{Baseline, false}, {Named, true}} {
		h := recordedHost(t, "b", outputs)
		s := TakeSample(context.Background(), h, tt.named)
		ran := h.Ran()
		if s.Firewall == nil {
			t.Fatalf("named %v: no firewall read", tt.named)
		}
		if got := strings.Contains(strings.Join(ran, "\n"), "nft -a list ruleset"); got != tt.texts {
			t.Errorf("named %v: ran %q; nft -a read: %v, want %v", tt.named, ran, got, tt.texts)
		}
		withText := false
		for _, r := range s.Firewall.Rules {
			withText = withText || r.Text != ""
		}
		if withText != tt.texts {
			t.Errorf("named %v: rule texts present %v, want %v", tt.named, withText, tt.texts)
		}
	}
}

func TestDeltaLayers(t *testing.T) {
	const nftJSON, nftText, netDev = "nft -j list ruleset", "nft -a list ruleset", "/proc/net/dev"
	tests := []struct {
		name          string
		delta         func(t *testing.T) HostDelta
		role          string
		want          HostDelta // compared without CPUBusy
		wantLines     []string
		wantFirewalls []string // FirewallGrowth.String of each
	}{
		{
			// A table of its own on lab node b dropped 3% of the tunnel's
			// datagrams during a 2 s TCP run (testdata/probe/counters/README.md).
			name: "recorded: nft rule on the receiver drops tunnel datagrams",
			delta: func(t *testing.T) HostDelta {
				return recordedDelta(t, "netns:wgl-wgc1-b",
					map[string]string{nftJSON: "counters/drop-b-before.nft.json"},
					map[string]string{nftJSON: "counters/drop-b-after.nft.json", nftText: "counters/drop-b-after.nft.txt"})
			},
			role:          "receiver",
			want:          HostDelta{Host: targettest.Spec("netns:wgl-wgc1-b")},
			wantFirewalls: []string{"inet wgc_drop input handle 2: udp dport 51820 numgen random mod 100 < 3 counter drop"},
			wantLines: []string{"receiver (netns:wgl-wgc1-b) dropped 1,016 packets in the firewall: " +
				"inet wgc_drop input handle 2: udp dport 51820 numgen random mod 100 < 3 counter drop"},
		},
		{
			// The accept rule under the limit grew too: what it let through is no drop.
			name: "recorded: an ICMP limit's accept rule grows, only its drop rule counts",
			delta: func(t *testing.T) HostDelta {
				return recordedDelta(t, "netns:b",
					map[string]string{nftJSON: "icmpburst/nft-accept-then-drop-before.nft.json"},
					map[string]string{nftJSON: "icmpburst/nft-accept-then-drop-after.nft.json"})
			},
			role:          "sender",
			want:          HostDelta{Host: targettest.Spec("netns:b")},
			wantFirewalls: []string{"inet filter input handle 3"},
			wantLines:     []string{"sender (netns:b) dropped 32 packets in the firewall: inet filter input handle 3"},
		},
		{
			// wireguard-go could not keep up with a UDP flood: the TUN device dropped.
			name: "recorded: TUN device drops on the sender",
			delta: func(t *testing.T) HostDelta {
				return recordedDelta(t, "netns:wgl-wgc1-a",
					map[string]string{netDev: "counters/flood-a-before-net_dev.txt"},
					map[string]string{netDev: "counters/flood-a-after-net_dev.txt"})
			},
			role:      "sender",
			want:      HostDelta{Host: targettest.Spec("netns:wgl-wgc1-a"), Interfaces: []InterfaceGrowth{{Interface: "wg-wgc1-a", TxDropped: 60384}}},
			wantLines: []string{"sender (netns:wgl-wgc1-a) dropped 60,384 outgoing packets at interface wg-wgc1-a (tx drop)"},
		},
		{
			name: "no nft, no iptables, no /proc: empty parts, no lines",
			delta: func(t *testing.T) HostDelta {
				return recordedDelta(t, "ssh:bare", nil, nil)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("ssh:bare")},
		},
		{
			name: "softnet per CPU: the CPUs that dropped or were squeezed",
			delta: func(t *testing.T) HostDelta {
				before := Sample{Softnet: []facts.SoftnetCPU{{CPU: 0, Dropped: 5, TimeSqueeze: 1}, {CPU: 1}, {CPU: 2, Dropped: 7}}}
				after := Sample{Softnet: []facts.SoftnetCPU{{CPU: 0, Dropped: 5, TimeSqueeze: 1}, {CPU: 1, Dropped: 1234, TimeSqueeze: 57}, {CPU: 2, Dropped: 7, TimeSqueeze: 3}}}
				return Delta(End{Host: targettest.Spec("netns:b")}, before, after)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("netns:b"), SoftnetDropped: 1234, TimeSqueeze: 60,
				SoftnetCPUs: []SoftnetGrowth{{CPU: 1, Dropped: 1234, TimeSqueeze: 57}, {CPU: 2, TimeSqueeze: 3}}},
			wantLines: []string{
				"receiver (netns:b) dropped 1,234 packets on CPU 1: backlog full (softnet dropped)",
				"receiver (netns:b) ran out of softirq budget 57 times on CPU 1 (softnet time_squeeze)",
				"receiver (netns:b) ran out of softirq budget 3 times on CPU 2 (softnet time_squeeze)",
			},
		},
		{
			name: "interface counters: each that grew, a new interface left out, a name from the host escaped",
			delta: func(t *testing.T) HostDelta {
				before := Sample{NetDev: []facts.NetDev{{Name: "eth0", RxDropped: 10}, {Name: "wg\x1b]0;pwned\a", TxErrors: 1}}}
				after := Sample{NetDev: []facts.NetDev{{Name: "eth0", RxDropped: 12, RxErrors: 3}, {Name: "wg\x1b]0;pwned\a", TxErrors: 2},
					{Name: "new0", RxDropped: 99}}}
				return Delta(End{Host: targettest.Spec("netns:b")}, before, after)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("netns:b"), Interfaces: []InterfaceGrowth{{Interface: "eth0", RxDropped: 2, RxErrors: 3},
				{Interface: "wg\x1b]0;pwned\a", TxErrors: 1}}},
			wantLines: []string{
				"receiver (netns:b) dropped 2 received packets at interface eth0 (rx drop)",
				"receiver (netns:b) had 3 receive errors at interface eth0",
				`receiver (netns:b) had 1 transmit errors at interface 'wg\x1b]0;pwned\x07'`,
			},
		},
		{
			name: "kernel WireGuard's own rejects and unroutable sends, named at its interface",
			delta: func(t *testing.T) HostDelta {
				// The kernel counts a reject in rx_errors and in its kind (the frame column).
				before := Sample{NetDev: []facts.NetDev{{Name: "wg0"}}}
				after := Sample{NetDev: []facts.NetDev{{Name: "wg0", RxErrors: 5, RxFrame: 5, TxErrors: 2}}}
				return Delta(End{Host: targettest.Spec("netns:b"), Interface: "wg0", Port: 51820}, before, after)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("netns:b"), Tunnel: "wg0", TunnelPort: 51820,
				Interfaces: []InterfaceGrowth{{Interface: "wg0", RxErrors: 5, RxFrame: 5, TxErrors: 2}}},
			wantLines: []string{
				"receiver (netns:b) rejected 5 packets from its peers at wg0: an inner source outside the peer's AllowedIPs, not IP, or a bad length (rx frame errors)",
				"receiver (netns:b) could not send 2 packets into the tunnel at wg0: no peer's AllowedIPs cover the destination, or the peer has no endpoint (tx errors)",
			},
		},
		{
			name: "receive buffer drops on another socket (the test's own), not the tunnel's",
			delta: func(t *testing.T) HostDelta {
				before := Sample{SNMP: map[string]map[string]int64{"Udp": {"RcvbufErrors": 3}},
					UDPSockets: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 7}, {Family: "inet", LocalPort: 5201, Inode: 9}}}
				after := Sample{SNMP: map[string]map[string]int64{"Udp": {"RcvbufErrors": 200}},
					UDPSockets: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 7}, {Family: "inet", LocalPort: 5201, Drops: 197, Inode: 9}}}
				return Delta(End{Host: targettest.Spec("netns:b"), Interface: "wg0", Port: 51820}, before, after)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("netns:b"), Tunnel: "wg0", TunnelPort: 51820, UDPRcvbufErrors: 197, SocketsKnown: true,
				Sockets: []SocketDrops{{Port: 5201, Family: "inet", Dropped: 197}}},
			wantLines: []string{
				"receiver (netns:b) dropped 197 UDP datagrams: receive buffer full (Udp RcvbufErrors), not on the tunnel's socket: on port 5201: 197",
			},
		},
		{
			name: "receive buffer drops on the tunnel's socket; a rebound socket counts from 0",
			delta: func(t *testing.T) HostDelta {
				before := Sample{SNMP: map[string]map[string]int64{"Udp": {"RcvbufErrors": 0}},
					UDPSockets: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Drops: 40, Inode: 7}}}
				after := Sample{SNMP: map[string]map[string]int64{"Udp": {"RcvbufErrors": 9312}},
					UDPSockets: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Drops: 9312, Inode: 8}}}
				return Delta(End{Host: targettest.Spec("netns:b"), Port: 51820}, before, after)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("netns:b"), TunnelPort: 51820, UDPRcvbufErrors: 9312, SocketsKnown: true,
				Sockets: []SocketDrops{{Port: 51820, Family: "inet", Dropped: 9312, Tunnel: true}}},
			wantLines: []string{
				"receiver (netns:b) dropped 9,312 UDP datagrams: receive buffer full (Udp RcvbufErrors), on the tunnel's socket (port 51820: 9,312)",
			},
		},
		{
			name: "receive buffer drops of a socket that closed during the run",
			delta: func(t *testing.T) HostDelta {
				before := Sample{SNMP: map[string]map[string]int64{"Udp": {"RcvbufErrors": 0}},
					UDPSockets: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 7}}}
				after := Sample{SNMP: map[string]map[string]int64{"Udp": {"RcvbufErrors": 12}},
					UDPSockets: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 7}}}
				return Delta(End{Host: targettest.Spec("netns:b"), Port: 51820}, before, after)
			},
			role: "receiver",
			want: HostDelta{Host: targettest.Spec("netns:b"), TunnelPort: 51820, UDPRcvbufErrors: 12, SocketsKnown: true},
			wantLines: []string{
				"receiver (netns:b) dropped 12 UDP datagrams: receive buffer full (Udp RcvbufErrors), not on a socket still open: one that closed during the run (a test's own), not the tunnel's",
			},
		},
		{
			name: "a drop policy's counter, and a rule text from the host escaped",
			delta: func(t *testing.T) HostDelta {
				rule := facts.FirewallRule{Backend: "nft", Family: "inet", Table: "t", Chain: "input", Handle: 7, Verdict: "drop", HasCounter: true,
					Text: "udp dport 51820 drop comment \"\x1b[2J\nrm -rf /\""}
				policy := facts.FirewallChain{Backend: "iptables", Family: "ip", Table: "filter", Name: "INPUT", Policy: "drop", HasCounter: true}
				before := Sample{Firewall: &facts.Firewall{Rules: []facts.FirewallRule{rule}, Chains: []facts.FirewallChain{policy}}}
				rule.Packets, policy.Packets = 4, 2
				after := Sample{Firewall: &facts.Firewall{Rules: []facts.FirewallRule{rule}, Chains: []facts.FirewallChain{policy}}}
				return Delta(End{Host: targettest.Spec("netns:b")}, before, after)
			},
			role:          "receiver",
			want:          HostDelta{Host: targettest.Spec("netns:b")},
			wantFirewalls: []string{"inet t input handle 7: udp dport 51820 drop comment \"\x1b[2J\nrm -rf /\"", "ip filter INPUT policy DROP"},
			wantLines: []string{
				`receiver (netns:b) dropped 4 packets in the firewall: inet t input handle 7: udp dport 51820 drop comment "\x1b[2J\nrm -rf /"`,
				"receiver (netns:b) dropped 2 packets in the firewall: ip filter INPUT policy DROP",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.delta(t)
			var fw []string
			for _, g := range got.Firewall {
				fw = append(fw, g.String())
			}
			if d := cmp.Diff(tt.wantFirewalls, fw); d != "" {
				t.Errorf("firewall drops (-want +got)\n%s", d)
			}
			got.Firewall, got.CPUBusy, got.Seconds = nil, nil, 0 // Seconds: the clock between the two reads
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("delta (-want +got)\n%s", d)
			}
			if d := cmp.Diff(tt.wantLines, tt.delta(t).Attribution(tt.role)); d != "" {
				t.Errorf("attribution (-want +got)\n%s", d)
			}
		})
	}
}

// TestHostDeltaJSONLists: a run where nothing grew still lists its layers as [].
func TestHostDeltaJSONLists(t *testing.T) {
	b, err := json.Marshal(HostDelta{Host: targettest.Spec("netns:b")})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"cpu_busy_percent":[]`, `"softnet_per_cpu":[]`, `"interface_drops":[]`, `"firewall_drops":[]`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("%s lacks %s", b, k)
		}
	}
	// A firewall drop keeps icmp-burst's shape: the rule, and the packets it dropped.
	d := HostDelta{Firewall: []firewall.FirewallGrowth{{Rule: &facts.FirewallRule{Backend: "nft", Verdict: "drop"}, Packets: 3}}}
	if b, _ = json.Marshal(d); !strings.Contains(string(b), `"firewall_drops":[{"rule":{"backend":"nft"`) || !strings.Contains(string(b), `"packets":3}]`) {
		t.Errorf("firewall drops: %s", b)
	}
}
