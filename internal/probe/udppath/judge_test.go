package udppath

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// Judge on recorded runs: a loss only the run carrying WireGuard's port
// meets is a port throttle; a tunnel collapse that neither run reproduces is
// WireGuard's own (the multi-WAN router's 5G link: raw UDP clean, WireGuard at
// 1.7 Mbit/s), never a policer; a run on wgperf's port that was policed has
// said so itself.
func TestJudge(t *testing.T) {
	c := Config{Client: targettest.New("netns:wgl-h6-a"), Server: targettest.New("netns:wgl-h6-b"), Addr: "203.0.113.2",
		Direction: bench.Upload, TCPMbit: 190, SenderInterface: "wg-h6-a", ClientInterface: "wg-h6-a", ServerInterface: "wg-h6-b",
		ServerKey: "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA="}
	onPort := c
	onPort.WireGuardPort = 51820
	run := func(c Config, name string) *Result { return Analyze(c, recorded(t, name), 0) }
	// Recorded in the lab (--port-police 25 --client-port 51900): UDP at
	// 190 Mbit/s from A's iperf3 bound to port 51820 (B's WireGuard port)
	// loses 60% at R, from an ephemeral port 0.07%.
	other, onWGPort := "udp-other-port-190m.json", "udp-port-51820-policed.json"
	clean, lossy, policed := "udp-50m.json", "udp-20m-loss3.json", "udp-policed-25pct.json"
	for _, tc := range []struct {
		name string
		pair Pair
		want finding.ID // "": none
	}{
		{"only WireGuard's port is policed", Pair{Other: run(c, other), OnPort: run(onPort, onWGPort), TunnelMbit: 50}, catalog.PathPortThrottled},
		{"the same losses at the receiver's socket are no throttle", Pair{Other: run(c, other), OnPort: Analyze(onPort, recorded(t, onWGPort), recorded(t, onWGPort).LostPackets), TunnelMbit: 50}, ""},
		{"WireGuard's port policed beside 3% random loss", Pair{Other: run(c, lossy), OnPort: run(onPort, policed), TunnelMbit: 15}, catalog.PathPortThrottled},
		{"all UDP policed: the other run said so", Pair{Other: run(c, policed), OnPort: run(onPort, policed), TunnelMbit: 47}, ""},
		{"the 5G collapse: both runs clean", Pair{Other: run(c, clean), OnPort: run(onPort, clean), TunnelMbit: 1.7}, catalog.WGSpecificCollapse},
		{"the 5G collapse, WireGuard's port not free", Pair{Other: run(c, clean), NoPort: "both ends listen on 51820", TunnelMbit: 1.7}, catalog.WGSpecificCollapse},
		{"a tunnel a little short of clean UDP", Pair{Other: run(c, clean), OnPort: run(onPort, clean), TunnelMbit: 44}, ""},
		{"CUBIC collapsing on a path that loses 3%: the loss's, not WireGuard's", Pair{Other: run(c, lossy), OnPort: run(onPort, lossy), TunnelMbit: 2.8}, ""},
		{"CUBIC collapsing where only WireGuard's port loses 3% at random: the loss's", Pair{Other: run(c, clean), OnPort: run(onPort, lossy), TunnelMbit: 2.8}, ""},
	} {
		fs := Judge(tc.pair)
		var got finding.ID
		if len(fs) > 0 {
			got = fs[0].ID
		}
		if tc.want == catalog.PathPortThrottled && len(fs) == 2 && fs[1].ID == got {
			fs = fs[1:] // the near end's half; the far end's is TestPortFixMovesBothEnds's
		}
		if len(fs) > 1 || got != tc.want {
			t.Errorf("%s: findings %v, want %q", tc.name, fs, tc.want)
			continue
		}
		if got == "" {
			continue
		}
		f := fs[0]
		if f.Host.String() != "netns:wgl-h6-a" || len(f.Fixes) == 0 || len(f.Evidence) < 3 {
			t.Errorf("%s: %+v", tc.name, f)
		}
		if got == catalog.WGSpecificCollapse && strings.Contains(strings.ToLower(f.Title+f.Detail), "policed") {
			t.Errorf("%s: a collapse no UDP run reproduces is called policing: %s", tc.name, f.Title)
		}
		if tc.pair.OnPort == nil && !strings.Contains(f.Evidence[len(f.Evidence)-1].Value, "both ends listen on 51820") {
			t.Errorf("%s: the unmeasured port is not said: %+v", tc.name, f.Evidence)
		}
	}
}

// The port fix moves both ends: the far end's listen port and this end's
// peer endpoint, the one named by the far end's key.
func TestPortFixMovesBothEnds(t *testing.T) {
	c := Config{Client: targettest.New("netns:wgl-h6-a"), Server: targettest.New("netns:wgl-h6-b"), Addr: "203.0.113.2", Direction: bench.Download,
		TCPMbit: 190, SenderInterface: "wg-h6-b", ClientInterface: "wg-h6-a", ServerInterface: "wg-h6-b", ServerKey: "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA=", WireGuardPort: 51820}
	o := c
	o.WireGuardPort = 0
	fs := Judge(Pair{Other: Analyze(o, recorded(t, "udp-50m.json"), 0), OnPort: Analyze(c, recorded(t, "udp-policed-25pct.json"), 0), TunnelMbit: 40})
	if len(fs) != 2 || fs[0].Host.String() != "netns:wgl-h6-b" || fs[1].Host.String() != "netns:wgl-h6-a" || fs[0].ID != fs[1].ID {
		t.Fatalf("findings %+v, want the far end's half on B, then the near end's on A", fs)
	}
	for i, want := range []struct {
		action        finding.Action
		command, conf string
		other         string
	}{
		{finding.Action{Kind: remedy.KindWGListenPort, Params: map[string]string{"interface": "wg-h6-b", "port": "51821"}},
			"wg set wg-h6-b listen-port 51821", "ListenPort = 51821", "the other half, on netns:wgl-h6-a"},
		{finding.Action{Kind: remedy.KindWGPeerEndpoint, Params: map[string]string{"interface": "wg-h6-a", "peer": "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA=", "endpoint": "203.0.113.2:51821"}},
			"wg set wg-h6-a peer kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA= endpoint 203.0.113.2:51821", "Endpoint = 203.0.113.2:51821", "the other half, on netns:wgl-h6-b"},
	} {
		f := fs[i]
		if len(f.Fixes) != 1 || f.Fixes[0].Action == nil || !reflect.DeepEqual(*f.Fixes[0].Action, want.action) {
			t.Errorf("%s: fixes %+v, want the action %+v", f.Host, f.Fixes, want.action)
			continue
		}
		if got := strings.Join(f.Fixes[0].Commands, "\n"); got != want.command {
			t.Errorf("%s: commands %q, want %q", f.Host, got, want.command)
		}
		if got := f.Fixes[0].Config[0].Lines[0]; got != want.conf {
			t.Errorf("%s: config %q, want %q", f.Host, got, want.conf)
		}
		if !strings.Contains(f.Detail, want.other) || !strings.Contains(f.Fixes[0].Description, "(the other half)") {
			t.Errorf("%s: does not say the other half is needed: %s / %s", f.Host, f.Detail, f.Fixes[0].Description)
		}
	}
	// Without the interfaces' names or the far end's key, the commands alone.
	c.ClientInterface, c.ServerInterface, c.ServerKey = "", "", ""
	fs = Judge(Pair{Other: Analyze(o, recorded(t, "udp-50m.json"), 0), OnPort: Analyze(c, recorded(t, "udp-policed-25pct.json"), 0), TunnelMbit: 40})
	if len(fs) != 2 || fs[0].Fixes[0].Action != nil || fs[1].Fixes[0].Action != nil ||
		fs[1].Fixes[0].Commands[0] != "wg set wg0 peer '<the far end'\\''s public key>' endpoint 203.0.113.2:51821" {
		t.Errorf("without names: %+v", fs)
	}
	if NewPort(65535) != 65534 || endpoint("2001:db8::2", "51821") != "[2001:db8::2]:51821" {
		t.Error("port or endpoint")
	}
}

// Capacity is not a policer: UDP that lost a policer's share while
// delivering what TCP carried on the path at the same moment met the path's
// capacity. Recorded in the lab (--rate 50 --path-cycle 18, the low phase
// at 20 Mbit/s): UDP offered at the 47.8 Mbit/s the bench's underlay carried
// lost 54%, 19.6 arrived, and TCP right after carried 19.1; R's UDP policer
// at a quarter of 200 Mbit/s lets 48 through where TCP carries 190.
func TestCapacityIsNoPolicer(t *testing.T) {
	c := Config{Client: targettest.New("netns:wgl-rnk-a"), Server: targettest.New("netns:wgl-rnk-b"), Addr: "203.0.113.2",
		Direction: bench.Upload, TCPMbit: 47.8, SenderInterface: "wg-rnk-a"}
	low, lowTCP := recorded(t, "udp-path-cycle-low-48m.json"), recorded(t, "tcp-path-cycle-low.json").Mbit()
	full := recorded(t, "healthy-200m-bbr-upload-underlay.json").Mbit()
	withLow := func(c Config, mbit float64) Config { c.PathLowMbit = mbit; return c }
	for _, tc := range []struct {
		name     string
		c        Config
		res      *iperf.Result
		tcpNow   float64 // 0: not measured
		capacity bool
		policed  bool
	}{
		{"a cycling path's low phase, TCP right after carrying as little", c, low, lowTCP, true, false},
		{"the low phase, the bench's own underlay seconds having caught it (20.9)", withLow(c, 20.9), low, 0, true, false},
		{"the low phase with nothing measured around it: loss above the rate offered", c, low, 0, false, true},
		{"the low phase, the bench having seen only the high one (40), TCP right after low", withLow(c, 40), low, lowTCP, true, false},
		{"a policer at a quarter while TCP carries the link", withLow(c, 181), recorded(t, "udp-policed-25pct.json"), full, false, true},
		{"a clean run is neither", c, recorded(t, "udp-50m.json"), 0, false, false},
	} {
		r := Analyze(tc.c, tc.res, 0)
		if tc.tcpNow > 0 {
			r.AgainstTCP(tc.tcpNow)
		}
		if r.Capacity != tc.capacity || r.Policed != tc.policed || (len(r.Findings) > 0) != tc.policed {
			t.Errorf("%s: %.1f of %.1f arrived (%.0f%% lost), capacity %v policed %v findings %d; want capacity %v policed %v",
				tc.name, r.ArrivedMbit, r.OfferedMbit, 100*r.PathLoss, r.Capacity, r.Policed, len(r.Findings), tc.capacity, tc.policed)
		}
		if tc.capacity && !strings.Contains(r.CapacityWords(), "no policer") {
			t.Errorf("%s: %q", tc.name, r.CapacityWords())
		}
		if tc.policed && !strings.Contains(r.Findings[0].Evidence[len(r.Findings[0].Evidence)-1].Key, "the least TCP carried") && r.capacityMbit() > 0 {
			t.Errorf("%s: the policer's evidence does not say what TCP carried: %+v", tc.name, r.Findings[0].Evidence)
		}
	}
	// Judged as a pair: a low phase on WireGuard's port is no throttle, and
	// a low phase on both is no collapse of WireGuard's own either.
	on := c
	on.WireGuardPort = 51820
	other, onPort := Analyze(c, recorded(t, "udp-other-port-190m.json"), 0), Analyze(on, low, 0)
	onPort.AgainstTCP(lowTCP)
	if fs := Judge(Pair{Other: other, OnPort: onPort, TunnelMbit: 18.3}); len(fs) != 0 {
		t.Errorf("a low phase on WireGuard's port: %v, want nothing", fs)
	}
	both := Analyze(c, low, 0)
	both.AgainstTCP(lowTCP)
	if fs := Judge(Pair{Other: both, TunnelMbit: 18.3, NoPort: "both ends listen on 51820"}); len(fs) != 0 {
		t.Errorf("a low phase: %v, want nothing", fs)
	}
}

// Where both ends listen on the throttled port (the run was sent to it),
// the near end's datagrams leave from it too: its half moves its own listen
// port with its peer's endpoint, in one step (measured in the lab: moving
// the far end's port and this end's peer alone left the tunnel at 48
// Mbit/s, rolled back).
func TestPortFixBothEndsOnOnePort(t *testing.T) {
	c := Config{Client: targettest.New("netns:wgl-rnk-a"), Server: targettest.New("netns:wgl-rnk-b"), Addr: "203.0.113.2", Direction: bench.Upload,
		TCPMbit: 190, ClientInterface: "wg-rnk-a", ServerInterface: "wg-rnk-b", ServerKey: "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA=", WireGuardPort: 51820, ToPort: true}
	o := c
	o.WireGuardPort, o.ToPort = 0, false
	fs := Judge(Pair{Other: Analyze(o, recorded(t, "udp-50m.json"), 0), OnPort: Analyze(c, recorded(t, "udp-policed-25pct.json"), 0), TunnelMbit: 47})
	if len(fs) != 2 || fs[1].Host.String() != "netns:wgl-rnk-a" {
		t.Fatalf("findings %+v", fs)
	}
	near := fs[1].Fixes
	if len(near) != 1 || near[0].Action == nil || near[0].Action.Kind != remedy.KindWGPortMove ||
		!slices.Contains(near[0].Commands, "wg set wg-rnk-a listen-port 51821") || near[0].Action.Params["endpoint"] != "203.0.113.2:51821" {
		t.Errorf("the near end's fixes %+v, want its own listen port and its peer's endpoint moved as one", near)
	}
	if len(fs[0].Fixes) != 1 || !strings.Contains(fs[0].Evidence[0].Source, "nft rewrite") {
		t.Errorf("the far end's half: %+v", fs[0])
	}
	// A near end on a port of its own keeps its port.
	c.ToPort = false
	if fs := Judge(Pair{Other: Analyze(o, recorded(t, "udp-50m.json"), 0), OnPort: Analyze(c, recorded(t, "udp-policed-25pct.json"), 0), TunnelMbit: 47}); len(fs) != 2 || len(fs[1].Fixes) != 1 {
		t.Errorf("--cport run: near end's fixes %+v", fs[1].Fixes)
	}
}
