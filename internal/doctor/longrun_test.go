package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/target/targettest"
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
		LongRun        *bench.LongRun `json:"long_run"`
		Shaping        *shaping.Result
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	m := Measured{Benched: true, Client: targettest.Spec(rec.Client), Server: targettest.Spec(rec.Server), Expected: bench.SingleHopRatio, Throughput: rec.Bench.Throughput()}
	// What doctor knew before the long run.
	var before []finding.Finding
	for _, f := range rec.Findings {
		if f.ID != catalog.ThroughputCollapseKnee && f.ID != catalog.ThroughputOscillation {
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
	osc := bench.CycleFinding(rec.Client, rec.Server, dir, targettest.Spec(rec.Client), "wg-fd2-a", c)
	if osc == nil {
		t.Fatalf("the long run shows no cycles: %+v", c)
	}
	found := finding.Merge(append(append(before, *osc), shaping.Findings(rec.Shaping)...))
	causes := Rank(found, m)
	if got := ids(causes); got[0] != string(catalog.ThroughputCollapseKnee)+"@"+rec.Client {
		t.Fatalf("ranked %v, want the knee first", got)
	}
	r := &Report{Client: targettest.Spec(rec.Client), Server: targettest.Spec(rec.Server), passive: map[causeKey]bool{}}
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
	cubic := append(healthyFs, finding.Finding{ID: catalog.TCPCongestionControl, Severity: finding.Warning, Host: targettest.Spec("a")})
	if why, _ := longRunPlan(cubic, slow, steady, snaps, false); why != "" {
		t.Errorf("slow, explained by CUBIC: long run %q", why)
	}
	if why, _ := longRunPlan(healthyFs, slow, steady, []*facts.Snapshot{}, false); !strings.Contains(why, "a userspace WireGuard implementation") {
		t.Errorf("slow, unexplained, userspace: long run %q, want one that names the userspace implementation (its catalog Load)", why)
	}
	// An ICMP limit makes the pair unhealthy, but not slow: no long run.
	icmp := append(healthyFs, finding.Finding{ID: catalog.ICMPRatelimitDrops, Severity: finding.Warning, Host: targettest.Spec("a")})
	if why, _ := longRunPlan(icmp, ok, steady, snaps, false); why != "" {
		t.Errorf("an ICMP limit on a pair at full rate: long run %q", why)
	}
}

// longRunRecord is a doctor report recorded with --thorough in the lab.
type longRunRecord struct {
	Client, Server string
	Findings       []finding.Finding
	Bench          *bench.Report
	LongRun        *bench.LongRun `json:"long_run"`
}

func readLongRunRecord(t *testing.T, name string) longRunRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec longRunRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.LongRun == nil || rec.LongRun.Parallel == nil {
		t.Fatalf("%s: no long run with a parallel run", name)
	}
	return rec
}

// A real WAN (kernel WireGuard in the guest, netem 20 ms each way and 2%
// loss, A sending with CUBIC at 20 Mbit/s), recorded with doctor --thorough:
// one stream for 30 s averaged 1.7 Mbit/s with 7 collapses every 4 s, 3 → 1
// Mbit/s, while 4 streams carried 8.3 (4.9× one). The cycles are CUBIC's own
// answer to loss: tcp.congestion-control ranks first and no cap is swept.
// Before, the sweep's 2 Mbit/s cap (throughput.collapse-knee) ranked first,
// and where the 2-second runs had shown no cost of CUBIC, as in a run of the
// kernel catalog, doctor did not name CUBIC at all.
func TestLossLimitedCubicRanksFirst(t *testing.T) {
	rec := readLongRunRecord(t, "wan-lossy-cubic.kernel.recorded.json")
	lr := rec.LongRun
	lr.LossLimited = false
	fs := longRunFindings(lr, targettest.Spec(rec.Client), targettest.Spec(rec.Server), targettest.Spec(rec.Client), "wg-k-a")
	if len(fs) != 1 || fs[0].ID != catalog.TCPCongestionControl || fs[0].Host.String() != rec.Client || !lr.LossLimited {
		t.Fatalf("long run findings %v (loss-limited %v), want tcp.congestion-control on %s", fs, lr.LossLimited, rec.Client)
	}
	if !strings.Contains(fs[0].Title, "4 streams carry 8.3 Mbit/s (4.9×)") || !strings.Contains(fs[0].Fixes[0].Description, "BBR") {
		t.Errorf("finding %q, fix %q", fs[0].Title, fs[0].Fixes[0].Description)
	}
	if why := sweepAfter(lr); why != "" {
		t.Errorf("a loss-limited stream's cycles call for a sweep: %q", why)
	}
	// What doctor knew before the long run, less the bench's own CUBIC finding.
	var before []finding.Finding
	for _, f := range rec.Findings {
		switch f.ID {
		case catalog.ThroughputCollapseKnee, catalog.ThroughputOscillation, catalog.TCPCongestionControl:
		default:
			before = append(before, f)
		}
	}
	m := Measured{Benched: true, Client: targettest.Spec(rec.Client), Server: targettest.Spec(rec.Server), Expected: bench.SingleHopRatio, Throughput: rec.Bench.Throughput()}
	causes := Rank(finding.Merge(append(before, fs...)), m)
	if got := ids(causes); got[0] != string(catalog.TCPCongestionControl)+"@"+rec.Client {
		t.Fatalf("ranked %v, want CUBIC first", got)
	}
}

// The lab's collapse cycles with a CUBIC sender (wireguard-go, knee at 60%
// of 200 Mbit/s), recorded with doctor --thorough: 5 collapses every 7 s,
// 116 → 14 Mbit/s, and 4 streams only 1.7× one: the knee caps them all, so
// the cycles are the knee's and the sweep runs. The same holds for a BBR
// sender, which no loss-based check concerns.
func TestKneeCyclesAreNotLossLimited(t *testing.T) {
	for _, name := range []string{"collapse-knee-cubic.recorded.json", "collapse-knee.recorded.json"} {
		rec := readLongRunRecord(t, name)
		lr := rec.LongRun
		fs := longRunFindings(lr, targettest.Spec(rec.Client), targettest.Spec(rec.Server), targettest.Spec(rec.Client), "wg0")
		if lr.LossLimited || len(fs) != 1 || fs[0].ID != catalog.ThroughputOscillation {
			t.Errorf("%s: findings %v (loss-limited %v), want throughput.oscillation", name, fs, lr.LossLimited)
		}
		if why := sweepAfter(lr); !strings.Contains(why, "tbf cap below the knee") {
			t.Errorf("%s: sweep %q", name, why)
		}
	}
}

// The loss-limited reading needs every part of its proof: a loss-based
// sender, retransmits, and a parallel run that carried far more.
func TestLossLimitedNeedsItsWholeProof(t *testing.T) {
	for name, spoil := range map[string]func(lr *bench.LongRun){
		"BBR sender":       func(lr *bench.LongRun) { lr.Single.Result.Congestion = "bbr" },
		"no retransmits":   func(lr *bench.LongRun) { lr.Single.Stats.Retransmits = 0 },
		"no parallel run":  func(lr *bench.LongRun) { lr.Parallel = nil },
		"parallel as slow": func(lr *bench.LongRun) { lr.Parallel.Stats.Mbit = 2 * lr.Cycles.MeanMbit },
	} {
		rec := readLongRunRecord(t, "wan-lossy-cubic.kernel.recorded.json")
		spoil(rec.LongRun)
		if f := bench.LossLimited(targettest.Spec(rec.Client), rec.LongRun.Single, rec.LongRun.Cycles, rec.LongRun.Parallel); f != nil {
			t.Errorf("%s: %s", name, f.Title)
		}
	}
}

// The lab's knee recording with an underlay that cycles as the tunnel does
// (as a path alternating every few seconds would): the cycle is the path's,
// so the finding says so, proposes no cap and no sweep follows; with the
// underlay steady, the knee's own reading stands.
func TestPathCyclesAreNotAKnee(t *testing.T) {
	rec := readLongRunRecord(t, "collapse-knee.recorded.json")
	lr := rec.LongRun
	alike := lr.Cycles
	alike.Seconds, alike.HighMbit, alike.LowMbit = 12, 190, 76
	lr.Underlay = &bench.Run{Spec: bench.Spec{Path: bench.PathUnderlay, Direction: bench.Upload, Streams: 1}, Addr: "198.51.100.2"}
	lr.UnderlayCycles, lr.PathCycles = &alike, bench.SharedCycle(lr.Cycles, alike)
	fs := longRunFindings(lr, targettest.Spec(rec.Client), targettest.Spec(rec.Server), targettest.Spec(rec.Client), "wg0")
	if !lr.PathCycles || len(fs) != 1 || fs[0].ID != catalog.ThroughputOscillation || !strings.HasPrefix(fs[0].Title, "The path itself cycles") {
		t.Fatalf("path cycles %v, findings %v", lr.PathCycles, fs)
	}
	if why := sweepAfter(lr); why != "" {
		t.Errorf("the path's cycle calls for a sweep: %q", why)
	}
	// The short runs fell in different phases (the lab's path-cycles in one
	// CI run: the tunnel at 42.8 Mbit/s, UDP outside at 133.5 of 133.6), so
	// the UDP probe called the collapse WireGuard's own and ranked it first.
	own := finding.Finding{ID: catalog.WGSpecificCollapse, Severity: finding.Warning, Host: targettest.Spec(rec.Client),
		Title: "The tunnel collapses where UDP outside it does not (upload): 42.8 Mbit/s through it, 133.5 of UDP arrived on a port of wgperf's own"}
	kept, dropped := withoutPhaseComparisons(append(slices.Clone(fs), own))
	if !dropped || len(kept) != 1 || kept[0].ID != catalog.ThroughputOscillation {
		t.Errorf("on a cycling path: kept %v (dropped %v), want the path's cycle alone", kept, dropped)
	}
	steady := bench.Cycles{Seconds: 12, HighMbit: 191, LowMbit: 186, MeanMbit: 189, CV: 0.01}
	lr.UnderlayCycles, lr.PathCycles = &steady, bench.SharedCycle(lr.Cycles, steady)
	if fs := longRunFindings(lr, targettest.Spec(rec.Client), targettest.Spec(rec.Server), targettest.Spec(rec.Client), "wg0"); lr.PathCycles || len(fs) != 1 || strings.HasPrefix(fs[0].Title, "The path") {
		t.Errorf("a steady underlay: path cycles %v, findings %v", lr.PathCycles, fs)
	}
	if why := sweepAfter(lr); !strings.Contains(why, "tbf cap below the knee") {
		t.Errorf("a steady underlay: sweep %q", why)
	}
}

// The knee meets only the tunnel's packets, so UDP outside the tunnel runs
// clean and the UDP probe calls the collapse WireGuard's own (the lab's
// collapse-cycles: the tunnel at 32.7 Mbit/s, 188.9 of 188.9 Mbit/s of UDP
// arrived). That names no mechanism: the long run still runs, and the knee
// the sweep proves ranks above it. Before, its 0.5 impact explained the slow
// bench, so no long run ran and the finding stood alone.
func TestKneeOutranksWireGuardsOwnCollapse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "collapse-knee.recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Client, Server string
		Findings       []finding.Finding
		Bench          *bench.Report
		LongRun        *bench.LongRun `json:"long_run"`
		Shaping        *shaping.Result
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	m := Measured{Benched: true, Client: targettest.Spec(rec.Client), Server: targettest.Spec(rec.Server), Expected: bench.SingleHopRatio, Throughput: rec.Bench.Throughput()}
	own := finding.Finding{ID: catalog.WGSpecificCollapse, Severity: finding.Warning, Host: targettest.Spec(rec.Client),
		Title: "The tunnel collapses where UDP outside it does not (upload): 32.7 Mbit/s through it, 188.9 of UDP arrived on a port of wgperf's own"}
	before := []finding.Finding{own}
	for _, f := range rec.Findings {
		if f.ID != catalog.ThroughputCollapseKnee && f.ID != catalog.ThroughputOscillation {
			before = append(before, f)
		}
	}
	if why, dir := longRunPlan(before, m, rec.Bench, nil, false); why == "" || dir != bench.Upload {
		t.Fatalf("long run %q in %q, want one in the upload", why, dir)
	}
	osc := bench.CycleFinding(rec.Client, rec.Server, bench.Upload, targettest.Spec(rec.Client), "wg-fd2-a", bench.CyclesOf(rec.LongRun.Single.Result))
	found := finding.Merge(append(append(before, *osc), shaping.Findings(rec.Shaping)...))
	if got := ids(Rank(found, m)); got[0] != string(catalog.ThroughputCollapseKnee)+"@"+rec.Client || got[1] != string(catalog.WGSpecificCollapse)+"@"+rec.Client {
		t.Fatalf("ranked %v, want the knee first, then the collapse it explains", got)
	}
}
