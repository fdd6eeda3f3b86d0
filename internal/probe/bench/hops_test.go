package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The road-warrior hub lab (A —— H at 40 Mbit/s, H —— B at 10, wireguard-go;
// TestBenchViaHub): testdata/probe/iperf/hub-40m-10m-DIRECTION-PATH.json,
// recorded with WGPERF_RECORD_HOPS.
func hubRun(t *testing.T, dir, path string, hop int) Run {
	res := recorded(t, "hub-40m-10m-"+dir+"-"+path+".json")
	r := run(PathTunnel, dir, 1, res)
	if hop > 0 {
		r = run(PathUnderlay, dir, 1, res)
		r.Hop = hop
		r.Client.Host, r.Server.Host = targettest.Spec([]string{"", "netns:a", "netns:h"}[hop]), targettest.Spec([]string{"", "netns:h", "netns:b"}[hop])
	}
	return r
}

// hubReport is the lab's bench --via, the hub's busiest CPU at hubCPU
// during the tunnel runs; without via, it is read as one underlay.
func hubReport(t *testing.T, via bool, hubCPU float64, runs ...Run) *Report {
	r := report(runs...)
	r.Hops = 2
	if via {
		r.Via = []target.Spec{targettest.Spec("netns:h")}
		for i := range r.Runs {
			if r.Runs[i].Path == PathTunnel {
				r.Runs[i].Hubs = []HostDelta{{Host: targettest.Spec("netns:h"), CPUBusy: []float64{hubCPU, 20}}}
			}
		}
	}
	return r
}

func TestAnalyzeHops(t *testing.T) {
	all := func(t *testing.T) []Run {
		var out []Run
		for _, dir := range []string{Upload, Download} {
			out = append(out, hubRun(t, dir, "tunnel", 0), hubRun(t, dir, "hop1", 1), hubRun(t, dir, "hop2", 2))
		}
		return out
	}
	tests := []struct {
		name  string
		rep   func(t *testing.T) *Report
		want  string // ids() of the findings
		check func(t *testing.T, r *Report)
	}{{
		name: "via the hub: judged against hop 2, the slowest, and healthy",
		rep:  func(t *testing.T) *Report { return hubReport(t, true, 40, all(t)...) },
		want: "",
		check: func(t *testing.T, r *Report) {
			if len(r.HopUnderlay) != 2 || r.HopUnderlay[0].UploadMbit < 35 || r.HopUnderlay[1].UploadMbit > 10 || r.HopUnderlay[1].DownloadMbit > 10 ||
				r.HopUnderlay[1].From.String() != "netns:h" || r.HopUnderlay[1].To.String() != "netns:b" {
				t.Errorf("hops %+v", r.HopUnderlay)
			}
			for _, c := range r.Cells {
				if c.Hop != 2 || !c.OK || c.Expected != MultiHopRatio || c.Ratio < 0.9 {
					t.Errorf("cell %+v", c)
				}
			}
			if th := r.Throughput(); th.Up.Underlay != r.HopUnderlay[1].UploadMbit || th.Down.Underlay != r.HopUnderlay[1].DownloadMbit {
				t.Errorf("throughput %+v: want hop 2's underlay", th)
			}
			if lines := strings.Join(r.HopLines(), "\n"); !strings.Contains(lines, "hop 2 (netns:h → netns:b)  upload 9.6  download 9.5 Mbit/s  slowest") ||
				!strings.Contains(lines, "hub netns:h: busiest CPU 0 at 40%") || strings.Count(lines, "slowest") != 1 {
				t.Errorf("lines:\n%s", lines)
			}
		},
	}, {
		// What one underlay between the client and the hub said before --via:
		// the first hop overstates the path, and the tunnel looks slow.
		name: "the first hop alone overstates the path",
		rep: func(t *testing.T) *Report {
			return hubReport(t, false, 0, hubRun(t, Upload, "tunnel", 0), underlayOf(hubRun(t, Upload, "hop1", 1)),
				hubRun(t, Download, "tunnel", 0), underlayOf(hubRun(t, Download, "hop1", 1)))
		},
		want: "critical throughput.tunnel-ratio@netns:a, critical throughput.tunnel-ratio@netns:b",
		check: func(t *testing.T, r *Report) {
			for _, c := range r.Cells {
				if c.Hop != 0 || c.OK || c.Ratio > 0.25 {
					t.Errorf("cell %+v", c)
				}
			}
			if len(r.HopUnderlay) != 0 || len(r.HopLines()) != 0 {
				t.Errorf("hops %+v without --via", r.HopUnderlay)
			}
		},
	}, {
		name: "a hop not measured may be the slowest: no cell for that direction",
		rep: func(t *testing.T) *Report {
			return hubReport(t, true, 40, all(t)[:5]...) // hop 2's download is missing
		},
		want: "",
		check: func(t *testing.T, r *Report) {
			if len(r.Cells) != 1 || r.Cells[0].Direction != Upload {
				t.Errorf("cells %+v", r.Cells)
			}
			if th := r.Throughput(); th.Down.Underlay != 0 {
				t.Errorf("download underlay %.1f from a path with a hop unmeasured", th.Down.Underlay)
			}
		},
	}, {
		name: "a hub's CPU at its limit: cpu.saturated on the hub",
		rep:  func(t *testing.T) *Report { return hubReport(t, true, 97, all(t)...) },
		want: "warning cpu.saturated@netns:h",
		check: func(t *testing.T, r *Report) {
			if f := r.Findings[0]; !strings.Contains(f.Title, "CPU 0 was 97% busy during the tunnel upload, 1 stream run") {
				t.Errorf("finding %q", f.Title)
			}
		},
	}, {
		name: "a slow tunnel through the hub is judged against hop 2 and named so",
		rep: func(t *testing.T) *Report {
			runs := all(t)
			for i := range runs {
				if runs[i].Path == PathTunnel {
					runs[i].Result = scaled(runs[i].Result, 0.4)
				}
			}
			return hubReport(t, true, 40, runs...)
		},
		want: "warning throughput.tunnel-ratio@netns:a, warning throughput.tunnel-ratio@netns:b",
		check: func(t *testing.T, r *Report) {
			f := r.Findings[0]
			if !strings.Contains(f.Title, "of the slowest hop's underlay (hop 2)") || f.Evidence[1].Key != "underlay hop 2 upload 1 stream" {
				t.Errorf("finding %q, evidence %+v", f.Title, f.Evidence[1])
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.rep(t)
			Analyze(r)
			if got := ids(r.Findings); got != tc.want {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// underlayOf is a hop's run as the one underlay between the ends.
func underlayOf(r Run) Run {
	r.Hop = 0
	r.Client.Host, r.Server.Host = targettest.Spec("netns:a"), targettest.Spec("netns:b")
	return r
}

// The bench --via the lab recorded (testdata/probe/hub/bench-via.json, its
// hub's CPU at 91% during the tunnel download: the lab's nodes share this
// machine's CPUs), analysed again, gives the verdict it printed.
func TestAnalyzeHopsRecordedReport(t *testing.T) {
	b, err := os.ReadFile(testdata("hub", "bench-via.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	cells := r.Cells
	Analyze(&r)
	if len(r.Cells) != 2 || len(cells) != 2 {
		t.Fatalf("cells %+v, recorded %+v", r.Cells, cells)
	}
	for i, c := range r.Cells {
		if c != cells[i] || c.Hop != 2 || !c.OK {
			t.Errorf("cell %+v, recorded %+v", c, cells[i])
		}
	}
	hub := r.Via[0]
	var hubCPU bool
	for _, f := range r.Findings {
		if f.ID == catalog.CPUSaturated && f.Host.Same(hub) {
			hubCPU = true
		}
		if strings.HasPrefix(string(f.ID), "throughput.") {
			t.Errorf("%s %s", f.ID, f.Title)
		}
	}
	if !hubCPU {
		t.Errorf("no cpu.saturated on the hub %s: %s", hub, ids(r.Findings))
	}
}

// Plan: --via replaces the one underlay with each hop's, tunnel first;
// without it the plan is today's.
func TestPlanHops(t *testing.T) {
	h, b := target.Netns("h"), target.Netns("b")
	c := Config{Client: target.Netns("a"), Server: b, TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2", Quick: true}
	var got []string
	for _, s := range Plan(c) {
		got = append(got, s.String())
	}
	if want := "tunnel upload, 1 stream|underlay upload, 1 stream|tunnel download, 1 stream|underlay download, 1 stream"; strings.Join(got, "|") != want {
		t.Errorf("without --via: %q", got)
	}
	c.Legs = []Leg{{From: c.Client, To: h, Addr: "198.51.100.1"}, {From: h, To: b, Addr: "203.0.113.2"}}
	got = nil
	for _, s := range Plan(c) {
		got = append(got, s.String())
	}
	if want := "tunnel upload, 1 stream|underlay hop 1 upload, 1 stream|underlay hop 2 upload, 1 stream|tunnel download, 1 stream|underlay hop 1 download, 1 stream|underlay hop 2 download, 1 stream"; strings.Join(got, "|") != want {
		t.Errorf("with --via: %q", got)
	}
	if hubs := c.hubs(); len(hubs) != 1 || hubs[0] != h {
		t.Errorf("hubs %v", hubs)
	}
}

// scaled is a copy of a result at share of its rate.
func scaled(res *iperf.Result, share float64) *iperf.Result {
	out := *res
	out.Intervals = append([]iperf.Interval(nil), res.Intervals...)
	for i := range out.Intervals {
		out.Intervals[i].Mbit *= share
	}
	out.SentMbit *= share
	out.ReceivedMbit *= share
	return &out
}
