package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A black hole mid-path (a 1400-byte hop dropping larger packets without a
// word, both ends at 1500: lab --silent-hop-mtu 1400) stalls the hosts' own
// TCP from A to B as much as the tunnel's. Recorded with doctor in the lab:
// its bench measured 0 Mbit/s through the tunnel and 0 around it in the
// upload, 183 and 191 in the download. The collapsed underlay is evidence,
// not a baseline: the MTU search runs (with MSS steps outside the tunnel),
// the black hole ranks first and the tunnel is slow, not "OK now" with a busy
// CPU as the verdict.
func TestUnderlayBlackHole(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "underlay-blackhole.recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Client, Server string
		Findings       []finding.Finding
		Bench          *bench.Report
		MTU            *mtu.Result
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	m := Measured{Benched: true, Client: targettest.Spec(rec.Client), Server: targettest.Spec(rec.Server), Expected: bench.SingleHopRatio, Throughput: rec.Bench.Throughput()}
	m.UnderlayFailed = underlayFailures(rec.Bench, "")
	if !slices.Equal(m.UnderlayFailed, []string{bench.Upload}) {
		t.Fatalf("underlay failed %v, want [upload]", m.UnderlayFailed)
	}
	// What the bench and the passive checks found: no MTU finding yet.
	var before []finding.Finding
	for _, f := range rec.Findings {
		if f.ID != catalog.MTUPMTUDBlackhole {
			before = append(before, f)
		}
	}
	plans := PlanProbes(Healthy(before, m), before, m, rec.Bench, nil)
	if len(plans) == 0 || plans[0].Probe != catalog.ProbeMTU || !strings.Contains(plans[0].Why, "underlay's own TCP collapsed in the upload") {
		t.Fatalf("probes %+v, want the MTU search because the underlay collapsed", plans)
	}
	if s := status(before, m); s != StatusSlow {
		t.Errorf("status before the probe %s, want %s", s, StatusSlow)
	}
	// The probe's own analysis of what it measured, outside the tunnel too.
	if rec.MTU.OutsideGood != 1360 || rec.MTU.OutsideBad != 1361 {
		t.Fatalf("recorded outside cliff %d..%d, want 1360..1361", rec.MTU.OutsideGood, rec.MTU.OutsideBad)
	}
	found := finding.Merge(append(before, mtu.Findings(rec.MTU)...))
	causes := Rank(found, m)
	if got := ids(causes); got[0] != string(catalog.MTUPMTUDBlackhole)+"@"+rec.Client {
		t.Fatalf("ranked %v, want the black hole first", got)
	}
	v := causes[0]
	if !strings.Contains(v.Finding.Title, "outside the tunnel") || !strings.Contains(v.Gain, "outside the tunnel too") {
		t.Errorf("verdict %q, gain %q: want both to say the hosts' own TCP stalls too", v.Finding.Title, v.Gain)
	}
	if s := status(found, m); s != StatusSlow {
		t.Errorf("status %s, want %s", s, StatusSlow)
	}
}

// Only a collapse against the other direction counts, and only one whose
// seconds carried next to nothing: a slow symmetric link is a baseline, a
// link slower one way (ADSL, cable) carries its rate every second, and a
// stalled underlay run is a failure in its direction.
func TestUnderlayFailures(t *testing.T) {
	run := func(dir string, mbit float64, seconds ...float64) bench.Run {
		r := bench.Run{Spec: bench.Spec{Path: bench.PathUnderlay, Direction: dir, Streams: 1}, Stats: bench.Stats{Mbit: mbit}, Result: &iperf.Result{}}
		for i, s := range seconds {
			r.Result.Intervals = append(r.Result.Intervals, iperf.Interval{Start: float64(i), End: float64(i + 1), Mbit: s})
		}
		return r
	}
	for _, tc := range []struct {
		name    string
		runs    []bench.Run
		stalled string
		want    []string
	}{
		{"healthy", []bench.Run{run(bench.Upload, 190, 190, 190, 190), run(bench.Download, 190, 190, 190, 190)}, "", nil},
		{"slow both ways", []bench.Run{run(bench.Upload, 2, 2, 2, 2), run(bench.Download, 2.1, 2, 2, 2)}, "", nil},
		{"cable at 1/20: slow one way, steady every second", []bench.Run{run(bench.Upload, 9.5, 9, 10, 9.5), run(bench.Download, 190, 190, 190, 190)}, "", nil},
		{"download collapsed", []bench.Run{run(bench.Upload, 190, 190, 190, 190), run(bench.Download, 0.3, 0.9, 0, 0)}, "", []string{bench.Download}},
		{"upload stalled before anything else ran", nil, bench.Upload, []string{bench.Upload}},
	} {
		if got := underlayFailures(&bench.Report{Runs: tc.runs}, tc.stalled); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
