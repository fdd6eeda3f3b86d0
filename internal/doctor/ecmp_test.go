package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// TestECMPSuggestions: a tunnel bound to one CPU or one flow, on a host with
// two uplinks (the multi-WAN lab, recorded) or two tunnels, gets the ECMP
// suggestion; a host with one of each, or a tunnel bound by nothing, does not.
func TestECMPSuggestions(t *testing.T) {
	multi, single := readSnap(t, "lab-multiwan-stale-a"), readSnap(t, "lab-healthy-a")
	cpu := func(host string) []finding.Finding {
		return []finding.Finding{{ID: catalog.CPUSaturated, Severity: finding.Warning, Host: host, Title: "CPU 0 100%"}}
	}
	run := func(streams int, mbit float64) bench.Run {
		return bench.Run{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: streams}, Result: &iperf.Result{}, Stats: bench.Stats{Mbit: mbit}}
	}
	flows := &bench.Report{Client: multi.Host, Server: "netns:b", Runs: []bench.Run{run(1, 40), run(4, 95)}}
	twoTunnels := readSnap(t, "lab-healthy-a")
	twoTunnels.WireGuard = append(twoTunnels.WireGuard, twoTunnels.WireGuard[0])
	twoTunnels.WireGuard[1].Name = "wg1"
	for _, tc := range []struct {
		name string
		got  []finding.Finding
		want string // a part of the title, "" for none
	}{
		{"CPU-bound, two uplinks", ECMPSuggestions(cpu(multi.Host), nil, toSnaps(multi)), "CPU-bound (a CPU at its limit while it carried traffic), and the host has 2 uplinks"},
		{"flow-bound, two uplinks", ECMPSuggestions(nil, flows, toSnaps(multi)), "flow-bound (upload one stream 40 Mbit/s, 4 streams 95)"},
		{"CPU-bound, two tunnels", ECMPSuggestions(cpu(twoTunnels.Host), nil, toSnaps(twoTunnels)), "2 WireGuard interfaces"},
		{"CPU-bound, one uplink and one tunnel", ECMPSuggestions(cpu(single.Host), nil, toSnaps(single)), ""},
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
