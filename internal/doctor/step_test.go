package doctor

import (
	"context"
	"slices"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestPlanIsWellFormed: every step of doctor's plan is named once in its
// round and says what it does; a probe's step runs it, an analysis' step
// analyses; what a step needs and raises are IDs of the catalog.
func TestPlanIsWellFormed(t *testing.T) {
	for _, rd := range Plan() {
		names := map[string]bool{}
		for _, st := range rd.Steps {
			if st.Name == "" || names[st.Name] {
				t.Errorf("round %q: step %q is unnamed or named twice", rd.Name, st.Name)
			}
			names[st.Name] = true
			if st.Doc == "" {
				t.Errorf("round %q: step %s says nothing of what it does (Doc)", rd.Name, st.Name)
			}
			if (st.Probe != nil) != (st.measure != nil) || (st.Probe == nil) != (st.analyse != nil) {
				t.Errorf("round %q: step %s: a probe's step measures, an analysis' analyses, one of the two", rd.Name, st.Name)
			}
			for _, id := range append(slices.Clone(st.Raises), st.Needs.Found...) {
				if _, ok := catalog.Lookup(id); !ok {
					t.Errorf("round %q: step %s names %s, which the catalog lacks", rd.Name, st.Name, id)
				}
			}
		}
	}
}

// TestAStepRaisesOnlyWhatItDeclares: the plan's runner records a finding a
// step adds outside its Raises, and only that.
func TestAStepRaisesOnlyWhatItDeclares(t *testing.T) {
	adds := func(id catalog.ID) func(context.Context, *play) {
		return func(_ context.Context, p *play) {
			p.found = append(p.found, finding.Finding{ID: id, Host: targettest.Spec("netns:a")})
		}
	}
	r := &Report{passive: map[causeKey]bool{}}
	p := &play{r: r, c: &Config{}, found: []finding.Finding{{ID: catalog.CPUSteal, Host: targettest.Spec("netns:a")}}}
	p.run(context.Background(), []Round{{Name: "test", Steps: []Step{
		{Name: "declared", Raises: []catalog.ID{catalog.PathHubLeg}, analyse: adds(catalog.PathHubLeg)},
		{Name: "undeclared", Raises: []catalog.ID{catalog.PathHubLeg}, analyse: adds(catalog.ThroughputShaperCap)},
		{Name: "far end", Needs: Needs{FarEnd: true}, analyse: adds(catalog.CPUSaturated)},
		{Name: "needs a finding absent", Needs: Needs{Found: []catalog.ID{catalog.UDPRcvbufErrors}}, analyse: adds(catalog.CPUSaturated)},
	}}})
	if len(r.undeclared) != 1 || r.undeclared[0] != "step undeclared raised throughput.shaper-cap, which its Raises do not declare" {
		t.Errorf("undeclared %q, want the one step's", r.undeclared)
	}
	if len(r.Findings) != 3 {
		t.Errorf("judged %d findings, want 3: the steps whose needs were not met ran", len(r.Findings))
	}
}

// measuresHosts are the analyses that measure or read the hosts: the root
// lab tests of doctor hold them to their Raises (noUndeclared).
var measuresHosts = []string{"bench", "unreachable", "peer-watch", "cpu-limits", "hub-cpu-limits", "uplinks", "bond-spread"}

// TestAnalysesRaiseWhatTheyDeclare plays each analysis of the plan judged
// against the bench on a case where it fires, through the plan's runner: it
// must raise something, and only what it declares. An analysis added to the
// plan needs its case here (or, when it measures the hosts, its name in
// measuresHosts and a root lab test).
func TestAnalysesRaiseWhatTheyDeclare(t *testing.T) {
	legs := &bench.Report{HopUnderlay: []bench.HopRate{
		{Hop: 1, From: targettest.Spec("netns:a"), To: targettest.Spec("netns:r"), Addr: "198.51.100.1", UploadMbit: 38.3, DownloadMbit: 38.3},
		{Hop: 2, From: targettest.Spec("netns:r"), To: targettest.Spec("netns:b"), Addr: "203.0.113.2", UploadMbit: 9.5, DownloadMbit: 9.5},
	}}
	capped := &facts.Snapshot{Host: targettest.Spec("netns:wgl-cap-a"), Links: []facts.Link{{Name: "wg-cap-a", Shaper: &facts.Shaper{Qdisc: "tbf", RateMbit: 80}}}}
	free := &facts.Snapshot{Host: targettest.Spec("netns:wgl-cap-b"), Links: []facts.Link{{Name: "wg-cap-b"}}}
	_, udp := checked(t, "lab-loss3-udpbuf64k-a", "lab-loss3-udpbuf64k-b")
	raise, err := remedy.Sysctl("net.core.rmem_max", "26214400")
	dropped := finding.Finding{ID: catalog.UDPRcvbufErrors, Severity: finding.Warning, Host: udp[1].Host,
		Fixes: remedy.Fixes("Raise net.core.rmem_max to 25 MiB", raise, err)}
	multi := readSnap(t, "lab-multiwan-stale-a")
	cases := map[string]func(p *play){
		"hub-legs": func(p *play) {
			p.r.Bench, p.r.Measured.Up.Tunnel, p.r.Measured.Down.Tunnel = legs, 9.2, 9.1
		},
		"shaper-caps": func(p *play) {
			p.r.Measured.Client, p.r.Measured.Server = capped.Host, free.Host
			p.r.Measured.Up, p.r.Measured.Down = bench.DirRate{Tunnel: 76.4, Underlay: 190.2}, bench.DirRate{Tunnel: 181.5, Underlay: 190.4}
			p.r.endpoints = discover.Endpoints{ClientInterface: "wg-cap-a", ServerInterface: "wg-cap-b"}
			p.snaps = []*facts.Snapshot{capped, free}
		},
		"same-limit-other-end": func(p *play) {
			p.found, p.snaps = []finding.Finding{dropped}, udp
		},
		"ecmp": func(p *play) {
			p.found = []finding.Finding{{ID: catalog.CPUSaturated, Severity: finding.Warning, Host: multi.Host, Title: "CPU 0 100%"}}
			p.snaps = []*facts.Snapshot{multi}
		},
		"phase-comparisons": func(p *play) {
			p.r.SetResult(bench.LongRunDef, &bench.LongRun{PathCycles: true})
			p.found = []finding.Finding{{ID: catalog.WGSpecificCollapse, Host: targettest.Spec("netns:a")}}
		},
	}
	for _, rd := range Plan() {
		for _, st := range rd.Steps {
			if st.Probe != nil || slices.Contains(measuresHosts, st.Name) {
				continue
			}
			setup, ok := cases[st.Name]
			if !ok {
				t.Errorf("analysis %s has no case here that shows what it raises", st.Name)
				continue
			}
			r := &Report{passive: map[causeKey]bool{}, Measured: Measured{Benched: true, Expected: bench.SingleHopRatio}}
			p := &play{r: r, c: &Config{Client: target.Local(), Server: target.Local()}}
			setup(p)
			before := len(p.found)
			if !p.step(context.Background(), st) {
				t.Errorf("%s did not run on its case", st.Name)
				continue
			}
			if len(st.Raises) > 0 && len(p.found) <= before {
				t.Errorf("%s raised nothing on its case", st.Name)
			}
			if len(st.Raises) == 0 && len(p.found) >= before {
				t.Errorf("%s raises nothing and dropped nothing on its case", st.Name)
			}
			for _, u := range r.undeclared {
				t.Error(u)
			}
		}
	}
}

// noUndeclared fails a lab test whose doctor run had a step raise a finding
// its Raises do not declare.
func noUndeclared(t *testing.T, r *Report) {
	t.Helper()
	for _, u := range r.undeclared {
		t.Error(u)
	}
}

// TestReplayPlaysOnlyWhatThePlanRan: the lab's recheck replays doctor's own
// runs; a probe the plan did not run is an error, not a run of the
// scenario's own.
func TestReplayPlaysOnlyWhatThePlanRan(t *testing.T) {
	r := &Report{Probes: []ProbeRun{{ProbePlan: ProbePlan{Probe: catalog.ProbeICMPBurst}}}}
	runs, found, err := r.Replay(context.Background(), []catalog.Probe{catalog.ProbeMTU})
	if err == nil || err.Error() != "doctor's plan did not run mtu: nothing to play again" || len(runs) != 0 || len(found) != 0 {
		t.Errorf("runs %v, found %v, err %v", runs, found, err)
	}
}
