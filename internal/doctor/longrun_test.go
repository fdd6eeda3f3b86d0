package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/shaping"
)

// Collapse cycles (lab --knee 60: past 60% of the link A's tunnel packets
// collapse to half for 4 s), recorded with doctor: the 3-second upload
// landed in a trough (49 of 191 Mbit/s, steady within it), the UDP run
// outside found no policer, nothing else explains it and the tunnel is a
// userspace one, so the long run ran: 7 collapses every 4.7 s, 116 → 31
// Mbit/s. The sweep that followed held 89 Mbit/s steady under a 92 Mbit/s cap.
// The knee ranks first; before, doctor had no verdict (a slow tunnel, its
// symptoms, and notes).
func TestCollapseCyclesRankFirst(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "collapse-knee.recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Client, Server string
		Findings       []finding.Finding
		Bench          *bench.Report
		LongRun        *LongRun `json:"long_run"`
		Shaping        *shaping.Result
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	m := Measured{Benched: true, Client: rec.Client, Server: rec.Server, Expected: bench.SingleHopRatio, Throughput: rec.Bench.Throughput()}
	// What doctor knew before the long run.
	var before []finding.Finding
	for _, f := range rec.Findings {
		if f.ID != check.ThroughputCollapseKnee && f.ID != check.ThroughputOscillation {
			before = append(before, f)
		}
	}
	if v := Rank(before, m); len(v) > 0 && v[0].Finding.Severity >= finding.Warning {
		t.Fatalf("before the long run %s already ranks first", v[0].Finding.ID)
	}
	why, dir := longRunPlan(before, m, rec.Bench, nil, false)
	if dir != bench.Upload || !strings.Contains(why, "userspace WireGuard") {
		t.Fatalf("long run %q in %q, want one in the upload because of the userspace implementation", why, dir)
	}
	c := bench.CyclesOf(rec.LongRun.Single.Result)
	osc := bench.CycleFinding(rec.Client, rec.Server, dir, rec.Client, "wg-fd2-a", c)
	if osc == nil {
		t.Fatalf("the long run shows no cycles: %+v", c)
	}
	found := finding.Merge(append(append(before, *osc), shaping.Findings(rec.Shaping)...))
	causes := Rank(found, m)
	if got := ids(causes); got[0] != string(check.ThroughputCollapseKnee)+"@"+rec.Client {
		t.Fatalf("ranked %v, want the knee first", got)
	}
	r := &Report{Client: rec.Client, Server: rec.Server, passive: map[string]bool{}}
	if cmd := r.command(causes[0].Finding); !strings.Contains(cmd, "--only throughput.collapse-knee") || strings.Contains(cmd, "--verify") {
		t.Errorf("command %q: want the cap applied on the confirm window alone (a short bench cannot see its gain)", cmd)
	}
}

// A healthy, steady pair keeps its short doctor, userspace or not; an
// unsteady one explained by a large cause (CUBIC losing to loss, buffer
// drops) needs no long run either; --thorough always gets one.
func TestLongRunPlanKeepsHealthyShort(t *testing.T) {
	healthyFs, snaps := checked(t, "lab-healthy-a", "lab-healthy-b")
	ok := measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 180, 190, 181, 190)
	steady := &bench.Report{Seconds: 3, Runs: []bench.Run{
		{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: 1}, Stats: bench.Stats{Mbit: 180, CV: 0.02}},
		{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Download, Streams: 1}, Stats: bench.Stats{Mbit: 181, CV: 0.03}},
	}}
	if why, _ := longRunPlan(healthyFs, ok, steady, snaps, false); why != "" {
		t.Errorf("healthy and steady: long run %q", why)
	}
	if why, _ := longRunPlan(healthyFs, ok, steady, snaps, true); why == "" {
		t.Errorf("--thorough: no long run")
	}
	slow := measured("a", "b", 60, 190, 181, 190)
	cubic := append(healthyFs, finding.Finding{ID: check.TCPCongestionControl, Severity: finding.Warning, Host: "a"})
	if why, _ := longRunPlan(cubic, slow, steady, snaps, false); why != "" {
		t.Errorf("slow, explained by CUBIC: long run %q", why)
	}
	if why, _ := longRunPlan(healthyFs, slow, steady, []*facts.Snapshot{}, false); why == "" {
		t.Errorf("slow, unexplained, userspace: no long run")
	}
	// An ICMP limit makes the pair unhealthy, but not slow: no long run.
	icmp := append(healthyFs, finding.Finding{ID: check.ICMPRatelimitDrops, Severity: finding.Warning, Host: "a"})
	if why, _ := longRunPlan(icmp, ok, steady, snaps, false); why != "" {
		t.Errorf("an ICMP limit on a pair at full rate: long run %q", why)
	}
}
