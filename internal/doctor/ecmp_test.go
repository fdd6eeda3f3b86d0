package doctor

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestECMPSuggestions: a tunnel bound to one CPU or one flow, on a host with
// two uplinks (the multi-WAN lab, recorded) or two tunnels, gets the ECMP
// suggestion; a host with one of each, or a tunnel bound by nothing, does not.
func TestECMPSuggestions(t *testing.T) {
	multi, single := readSnap(t, "lab-multiwan-stale-a"), readSnap(t, "lab-healthy-a")
	cpu := func(host string) []finding.Finding {
		return []finding.Finding{{ID: catalog.CPUSaturated, Severity: finding.Warning, Host: targettest.Spec(host), Title: "CPU 0 100%"}}
	}
	run := func(streams int, mbit float64) bench.Run {
		return bench.Run{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: streams}, Result: &iperf.Result{}, Stats: bench.Stats{Mbit: mbit}}
	}
	flows := &bench.Report{Client: multi.Host, Server: targettest.Spec("netns:b"), Runs: []bench.Run{run(1, 40), run(4, 95)}}
	twoTunnels := readSnap(t, "lab-healthy-a")
	twoTunnels.WireGuard = append(twoTunnels.WireGuard, twoTunnels.WireGuard[0])
	twoTunnels.WireGuard[1].Name = "wg1"
	for _, tc := range []struct {
		name string
		got  []finding.Finding
		want string // a part of the title, "" for none
	}{
		{"CPU-bound, two uplinks", ECMPSuggestions(cpu(multi.Host.String()), nil, toSnaps(multi)), "CPU-bound (a CPU at its limit while it carried traffic), and the host has 2 uplinks"},
		{"flow-bound, two uplinks", ECMPSuggestions(nil, flows, toSnaps(multi)), "flow-bound (upload one stream 40 Mbit/s, 4 streams 95)"},
		{"CPU-bound, two tunnels", ECMPSuggestions(cpu(twoTunnels.Host.String()), nil, toSnaps(twoTunnels)), "2 WireGuard interfaces"},
		{"CPU-bound, one uplink and one tunnel", ECMPSuggestions(cpu(single.Host.String()), nil, toSnaps(single)), ""},
		{"two uplinks, bound by nothing", ECMPSuggestions(nil, &bench.Report{Client: multi.Host, Runs: []bench.Run{run(1, 90), run(4, 95)}}, toSnaps(multi)), ""},
		{"the other end is CPU-bound", ECMPSuggestions(cpu("netns:other"), nil, toSnaps(multi)), ""},
	} {
		switch {
		case tc.want == "" && len(tc.got) > 0:
			t.Errorf("%s: suggested %q", tc.name, tc.got[0].Title)
		case tc.want != "" && (len(tc.got) != 1 || !strings.Contains(tc.got[0].Title, tc.want)):
			t.Errorf("%s: got %v, want a title with %q", tc.name, tc.got, tc.want)
		case tc.want != "" && (tc.got[0].ID != catalog.RouteECMPSuggested || tc.got[0].Fixes[0].Commands[0] != "wgperf fix ecmp --tunnels 2"):
			t.Errorf("%s: %+v", tc.name, tc.got[0])
		}
	}
}

func toSnaps(s ...*facts.Snapshot) []*facts.Snapshot { return s }

// bonded makes site A's uplink a bond of n slaves that report slaveMbit
// each, hashing on policy, as the bonding driver's sysfs shows it (its
// speed the slaves' sum). Transcribed, not recorded: this machine's kernel
// has no bonding driver (testdata/collect/ip/transcribed/README).
func bonded(t *testing.T, n, slaveMbit int, policy string) *facts.Snapshot {
	s := readSnap(t, "lab-healthy-a")
	var slaves []string
	for i := range n {
		slaves = append(slaves, "eno"+strconv.Itoa(i+1))
	}
	s.Links = append(s.Links, facts.Link{Name: "bond0", MTU: 1500, Kind: "bond", State: "UP", SpeedMbit: n * slaveMbit, Duplex: "full",
		Bond: &facts.Bond{Mode: "802.3ad 4", XmitHashPolicy: policy, Slaves: slaves}})
	for _, name := range slaves {
		kind := ""
		if slaveMbit == 10000 {
			kind = "veth" // the lab's slaves, whose speed is made up
		}
		s.Links = append(s.Links, facts.Link{Name: name, MTU: 1500, Kind: kind, State: "UP", Master: "bond0", SpeedMbit: slaveMbit, Duplex: "full"})
	}
	for i := range s.Routes {
		if s.Routes[i].Dev == "eth0" {
			s.Routes[i].Dev = "bond0"
		}
	}
	for i := range s.Endpoints {
		s.Endpoints[i].Dev = "bond0"
	}
	return s
}

// TestECMPOverABond: a tunnel at one slave's rate of a bond gets the ECMP
// suggestion with the gain to expect: by the slaves' link speeds (the ECMP
// case's 3×1G bond, its hash still layer2), or, where the slaves report a
// made-up speed (the lab's veths shaped at 100 Mbit/s), by the parallel
// streams around the tunnel, which a layer3+4 hash spread; a tunnel the
// streams around it do not outrun gets none.
func TestECMPOverABond(t *testing.T) {
	cells := func(client string, tunnel, underlay float64) *bench.Report {
		return &bench.Report{Client: targettest.Spec(client), Server: targettest.Spec("netns:b"), ClientUplink: "bond0", Cells: []bench.Cell{
			{Direction: bench.Upload, Streams: 1, TunnelMbit: tunnel * 0.98, UnderlayMbit: underlay / 2},
			{Direction: bench.Upload, Streams: 4, TunnelMbit: tunnel, UnderlayMbit: underlay},
		}}
	}
	threeG, lab := bonded(t, 3, 1000, "layer2 0"), bonded(t, 2, 10000, "layer3+4 1")
	for _, tc := range []struct {
		name     string
		snap     *facts.Snapshot
		rep      *bench.Report
		title    string
		evidence string // the expected gain's
		command  string
	}{
		{"the ECMP case: 890 Mbit/s over 3×1G", threeG, cells(threeG.Host.String(), 890, 900),
			"One tunnel carries 890 Mbit/s upload, one slave's worth of bond0 (802.3ad, 3 × 1000 Mbit/s): 3 tunnels over the bond (ECMP) can carry about 2670",
			"about 2670 Mbit/s (3.0×)", "wgperf fix ecmp --interface " + threeG.WireGuard[0].Name + " --tunnels 3"},
		{"the lab: 90 through the tunnel, 185 around it", lab, cells(lab.Host.String(), 90, 185),
			"One tunnel carries 90 Mbit/s upload, one slave's worth of bond0 (802.3ad, 2 slaves): 2 tunnels over the bond (ECMP) can carry about 180",
			"about 180 Mbit/s (2.0×)", "wgperf fix ecmp --interface " + lab.WireGuard[0].Name + " --tunnels 2"},
		{"the streams around it bound the gain", lab, cells(lab.Host.String(), 90, 140), "can carry about 140", "about 140 Mbit/s (1.6×)", ""},
		{"the tunnel keeps up with the streams around it", lab, cells(lab.Host.String(), 90, 95), "", "", ""},
		{"the bench's client is the other end", lab, cells("netns:other", 90, 185), "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ECMPSuggestions(nil, tc.rep, toSnaps(tc.snap))
			if tc.title == "" {
				if len(got) > 0 {
					t.Fatalf("suggested %q", got[0].Title)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Title, tc.title) || got[0].ID != catalog.RouteECMPSuggested {
				t.Fatalf("got %+v, want a title with %q", got, tc.title)
			}
			var gain string
			for _, e := range got[0].Evidence {
				if strings.HasPrefix(e.Key, "expected with") {
					gain = e.Value
				}
			}
			if gain != tc.evidence {
				t.Errorf("expected gain %q, want %q", gain, tc.evidence)
			}
			if tc.command != "" && got[0].Fixes[0].Commands[0] != tc.command {
				t.Errorf("fix %q, want %q", got[0].Fixes[0].Commands[0], tc.command)
			}
			if hash := strings.Contains(got[0].Detail, "bond.hash-policy"); hash != (tc.snap == threeG) {
				t.Errorf("the layer2 hash said: %v, want %v", hash, tc.snap == threeG)
			}
		})
	}
}
