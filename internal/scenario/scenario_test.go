package scenario

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probes"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// storyLog writes a scenario's progress lines to the test log.
type storyLog struct{ t *testing.T }

func (l storyLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestCatalogIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalog {
		if seen[s.Name] {
			t.Errorf("scenario %s declared twice", s.Name)
		}
		seen[s.Name] = true
		if s.Case == "" || s.Symptom == "" {
			t.Errorf("%s: needs the case it reproduces and its symptom", s.Name)
		}
		for _, id := range append([]finding.ID{s.Expect}, s.Also...) {
			if id != "" && !catalog.Has(id) {
				t.Errorf("%s: %s is not a catalog finding ID", s.Name, id)
			}
		}
		if s.Expect == "" && s.ECMP == 0 && s.Name != "healthy" && s.Name != "healthy-hub" {
			t.Errorf("%s: breaks nothing and expects nothing", s.Name)
		}
		// The underlay is measured before a breakage only when it slows the
		// underlay too: a route onto another uplink, loss on every packet, a
		// conntrack table the load fills.
		slows := s.Lab.Underlay.PathLossPct > 0 || s.HostSysctls["net.netfilter.nf_conntrack_max"] != ""
		for _, c := range s.Break {
			slows = slows || slices.Equal(c.Argv[:min(3, len(c.Argv))], []string{"ip", "route", "add"})
		}
		if s.BreaksUnderlay != slows {
			t.Errorf("%s: BreaksUnderlay %v, but its breakage slows the underlay: %v", s.Name, s.BreaksUnderlay, slows)
		}
		if s.BreaksUnderlay && len(s.Break) == 0 {
			t.Errorf("%s: BreaksUnderlay without a Break", s.Name)
		}
		for _, p := range s.Probes {
			if _, ok := probes.Lookup(catalog.Probe(p)); targeted(p) && !ok {
				t.Errorf("%s: targeted probe %q is not on doctor's probe list", s.Name, p)
			}
		}
	}
	for _, want := range []string{"healthy", "pmtud-blackhole", "mtu-fragmentation", "udp-rcvbuf", "stale-endpoint-route",
		"icmp-ratelimit", "icmp-ratelimit-iptables", "lossy-cubic", "conntrack-full", "mss-clamp-missing", "icmp-frag-blocked", "ecmp"} {
		if _, ok := Lookup(want); !ok {
			t.Errorf("catalog lacks %s", want)
		}
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name string
		sc   Scenario
		res  Result
		pass bool
		why  string
	}{
		{"fixed", Scenario{Expect: "mtu.tunnel-too-large"},
			Result{Found: true, Doctor: &DoctorVerdict{First: "mtu.tunnel-too-large"}, After: measured(183, 191, 0, 0)}, true, ""},
		{"doctor ranked a consequence first", Scenario{Expect: "udp.rcvbuf-errors"},
			Result{Found: true, Doctor: &DoctorVerdict{First: "tcp.congestion-control"}, After: measured(183, 191, 0, 0)}, false, "doctor ranked tcp.congestion-control first, want udp.rcvbuf-errors"},
		{"a latent cost that showed: the proven black hole behind it first", Scenario{Expect: "mtu.tunnel-too-large", Also: []finding.ID{"mtu.pmtud-blackhole"}, Latent: true},
			Result{Found: true, Doctor: &DoctorVerdict{Status: "slow", First: "mtu.pmtud-blackhole", Causes: []finding.ID{"mtu.pmtud-blackhole", "mtu.tunnel-too-large"}}, After: measured(183, 191, 0, 0)}, true, ""},
		{"a latent cost that showed, its own finding not named", Scenario{Expect: "mtu.tunnel-too-large", Also: []finding.ID{"mtu.pmtud-blackhole"}, Latent: true},
			Result{Found: true, Doctor: &DoctorVerdict{Status: "slow", First: "mtu.pmtud-blackhole", Causes: []finding.ID{"mtu.pmtud-blackhole"}}, After: measured(183, 191, 0, 0)}, false, "doctor ranked mtu.pmtud-blackhole first without naming mtu.tunnel-too-large"},
		{"doctor skipped the probe the case needs", Scenario{Expect: "mtu.pmtud-blackhole", Probes: []Probe{ProbeMTU}},
			Result{Found: true, Doctor: &DoctorVerdict{First: "mtu.pmtud-blackhole"}, After: measured(183, 191, 0, 0)}, false, "doctor did not run the mtu probe"},
		{"a workload is not doctor's to run", Scenario{Expect: "conntrack.table-pressure", Probes: []Probe{ProbeFlows}},
			Result{Found: true, Doctor: &DoctorVerdict{First: "conntrack.table-pressure"}, After: measured(183, 191, 0, 0)}, true, ""},
		{"healthy", Scenario{},
			Result{Found: true, Doctor: &DoctorVerdict{Status: "healthy"}, After: measured(183, 191, 0, 0)}, true, ""},
		{"healthy but doctor probed", Scenario{},
			Result{Found: true, Doctor: &DoctorVerdict{Status: "healthy"}, Probes: []ProbeResult{{ProbeMTU, ""}}, After: measured(183, 191, 0, 0)}, false, "doctor ran 1 targeted probes on a healthy tunnel"},
		{"healthy but doctor says slow", Scenario{},
			Result{Found: true, Doctor: &DoctorVerdict{Status: "slow"}, After: measured(183, 191, 0, 0)}, false, "doctor said slow on a healthy tunnel"},
		{"healthy: problems only the lab's deep shaper explains", Scenario{Lab: lab.Config{Underlay: lab.Shape{RateMbit: 20}}},
			Result{Doctor: &DoctorVerdict{Status: "problems"}, Findings: []finding.Finding{queueOn(bench.QueueOnPath)}, After: measured(18.3, 19.2, 18.3, 19.2)}, true, ""},
		{"healthy: a queue at the tunnel's ends", Scenario{Lab: lab.Config{Underlay: lab.Shape{RateMbit: 20}}},
			Result{Doctor: &DoctorVerdict{Status: "problems"}, Findings: []finding.Finding{queueOn(bench.QueueTunnelEnds)}, After: measured(18.3, 19.2, 18.3, 19.2)}, false, "doctor said problems on a healthy tunnel"},
		{"healthy: the path's queue in a lab that shapes nothing", Scenario{},
			Result{Doctor: &DoctorVerdict{Status: "problems"}, Findings: []finding.Finding{queueOn(bench.QueueOnPath)}, After: measured(18.3, 19.2, 18.3, 19.2)}, false, "doctor said problems on a healthy tunnel"},
		{"healthy: the lab's queue and another warning", Scenario{Lab: lab.Config{Underlay: lab.Shape{RateMbit: 20}}},
			Result{Doctor: &DoctorVerdict{Status: "problems"}, Findings: []finding.Finding{queueOn(bench.QueueOnPath), {ID: "udp.rcvbuf-errors", Severity: finding.Warning}}, After: measured(18.3, 19.2, 18.3, 19.2)}, false, "doctor said problems on a healthy tunnel"},
		{"missed", Scenario{Expect: "mtu.tunnel-too-large"},
			Result{After: measured(183, 191, 0, 0)}, false, "mtu.tunnel-too-large not reported"},
		{"fix did not help", Scenario{Expect: "tcp.congestion-control"},
			Result{Found: true, After: measured(3.4, 191, 0, 0)}, false, "after-fix ratio 0.02 < 0.90"},
		{"unexpected critical", Scenario{},
			Result{Found: false, Unexpected: []string{"route.stale-endpoint on a"}, After: measured(183, 191, 0, 0)}, false, "unexpected: route.stale-endpoint on a"},
		{"download still broken", Scenario{Expect: "mtu.pmtud-blackhole"},
			Result{Found: true, After: measured(182, 191, 0.07, 191)}, false, "after-fix ratio 0.00 < 0.90"},
		{"upload-only scenario ignores the download", Scenario{Expect: "tcp.congestion-control", UploadOnly: true},
			Result{Found: true, Doctor: &DoctorVerdict{First: "tcp.congestion-control"}, After: measured(182, 191, 150, 191)}, true, ""},
		{"probe still proves it after the fix", Scenario{Expect: "icmp.ratelimit-drops", Recheck: true},
			Result{Found: true, StillFound: true, After: measured(183, 191, 0, 0)}, false, "icmp.ratelimit-drops still proven after the fix"},
		{"ecmp scales", Scenario{ECMP: 2, MinScaling: 1.7},
			Result{Found: true, Before: measured(92, 0, 0, 0), After: measured(183, 0, 0, 0), TunnelShares: []float64{0.49, 0.51}}, true, ""},
		{"ecmp flat", Scenario{ECMP: 2, MinScaling: 1.7},
			Result{Found: true, Before: measured(92, 0, 0, 0), After: measured(95, 0, 0, 0), TunnelShares: []float64{0.5, 0.5}}, false, "ECMP scaling 1.03x < 1.70x"},
		{"ecmp scaled but one tunnel idle", Scenario{ECMP: 2, MinScaling: 1.7},
			Result{Found: true, Before: measured(92, 0, 0, 0), After: measured(183, 0, 0, 0), TunnelShares: []float64{0.98, 0.02}}, false, "tunnel 1 carried 2% of the bytes (fair share 50%)"},
		{"ecmp spread not measured", Scenario{ECMP: 2, MinScaling: 1.7},
			Result{Found: true, Before: measured(92, 0, 0, 0), After: measured(183, 0, 0, 0)}, false, "traffic measured on 0 of 2 tunnels"},
		{"the path's cycle: no cause on the hosts, nothing applied", pathCycles,
			Result{Found: true, Doctor: &DoctorVerdict{Status: "slow"}, Probes: longRun, Findings: []finding.Finding{pathCycleFinding(nil)}, After: measured(183, 191, 183, 191)}, true, ""},
		{"the path's cycle blamed on a host", pathCycles,
			Result{Found: true, Doctor: &DoctorVerdict{First: "udp.rcvbuf-errors"}, Probes: longRun, Findings: []finding.Finding{pathCycleFinding(nil)}, After: measured(183, 191, 183, 191)},
			false, "doctor ranked udp.rcvbuf-errors first, want no cause on the hosts (throughput.oscillation is the path's)"},
		{"the path's cycle, the lab's own queue first", shapedPathCycles,
			Result{Found: true, Doctor: &DoctorVerdict{Status: "problems", First: catalog.LatencyBufferbloat}, Probes: longRun,
				Findings: []finding.Finding{pathCycleFinding(nil), queueOn(bench.QueueOnPath)}, After: measured(18, 19, 18, 19)}, true, ""},
		{"the path's cycle, a queue at the tunnel's ends first", shapedPathCycles,
			Result{Found: true, Doctor: &DoctorVerdict{Status: "problems", First: catalog.LatencyBufferbloat}, Probes: longRun,
				Findings: []finding.Finding{pathCycleFinding(nil), queueOn(bench.QueueTunnelEnds)}, After: measured(18, 19, 18, 19)},
			false, "doctor ranked latency.bufferbloat first, want no cause on the hosts (throughput.oscillation is the path's)"},
		{"a cap proposed for the path's cycle", pathCycles,
			Result{Found: true, Doctor: &DoctorVerdict{Status: "slow"}, Probes: longRun, Findings: []finding.Finding{pathCycleFinding(&finding.Action{Kind: "tbf-cap"})}, After: measured(183, 191, 183, 191)},
			false, `doctor proposes to apply "Cap wg-run-a at 160 Mbit/s, below the collapse" on netns:wgl-run-a for a cause on the path`},
		{"queue gone after the fix", bloated,
			Result{Found: true, Doctor: &DoctorVerdict{First: catalog.LatencyBufferbloat}, After: measured(17, 18, 17, 18), BenchAfter: pinged()}, true, ""},
		{"queue still there after the fix", bloated,
			Result{Found: true, Doctor: &DoctorVerdict{First: catalog.LatencyBufferbloat}, After: measured(17, 18, 17, 18),
				BenchAfter: pinged(finding.Finding{ID: catalog.LatencyBufferbloat, Title: "Latency under load: an upload through the tunnel adds 190 ms"})},
			false, "after the fix: Latency under load: an upload through the tunnel adds 190 ms"},
		{"no round trip measured after the fix", bloated,
			Result{Found: true, Doctor: &DoctorVerdict{First: catalog.LatencyBufferbloat}, After: measured(17, 18, 17, 18), BenchAfter: &bench.Report{}},
			false, "the after-fix bench measured no round trip"},
	}
	for _, tt := range tests {
		r := &runner{sc: tt.sc, res: &tt.res}
		r.judge()
		if tt.res.Pass != tt.pass || !strings.Contains(tt.res.Why, tt.why) {
			t.Errorf("%s: pass %v why %q, want %v %q", tt.name, tt.res.Pass, tt.res.Why, tt.pass, tt.why)
		}
	}
}

// TestScenarios plays every catalog scenario in the lab with short
// measurements: doctor must rank the expected finding first (and say healthy
// on the healthy lab, without a targeted probe), nothing unexpected at warning
// or above, and the fix must bring the tunnel to 90% of the underlay (ECMP:
// 1.7x the single tunnel).
func TestScenarios(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "tc", "nft", "wg", "ping", "iperf3")
	exe := labtest.Binary(t)
	// One capacity measurement per lab shape serves every scenario.
	capacities := &Capacities{}
	lane := os.Getenv(laneEnv)
	part, parts := shard(t)
	hold := labtest.HoldMbit(t)
	partOf := partsOf(lane, parts)
	for _, sc := range Catalog {
		t.Run(sc.Name, func(t *testing.T) {
			if why := skipInLane(lane, sc); why != "" {
				t.Skip(why)
			}
			if partOf[sc.Name] != part {
				t.Skipf("part %d of %d plays it (%s)", partOf[sc.Name], parts, shardEnv)
			}
			if sc.Lab.ICMPLimitStyle == lab.ICMPLimitIptables || usesIptables(sc) {
				testutil.RequireTools(t, "iptables", "iptables-save")
			}
			opts := Options{Exe: exe, LabName: laneLab(lane, part), Seconds: 2, Capacities: capacities, HoldMbit: hold}
			if os.Getenv("WGPERF_SCENARIO_STORY") != "" {
				opts.Log = storyLog{t} // the scenario's story: break, findings, fix commands, probes, recheck
			}
			res, err := Play(context.Background(), sc, opts)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			t.Logf("sizing: %s", res.Sizing)
			if res.Skipped {
				t.Skip(res.Why)
			}
			// Two-second runs on a shared 2-core machine leave ~5% of margin
			// above 0.9: a run that only fell short on throughput is played once
			// more. A missing or unexpected finding fails at once, except a
			// clone's (missedATurn).
			if fellShort(*res, nothingTolerated) || missedATurn(sc, *res) {
				t.Logf("first run fell short (%s): %s; playing it again", res.Why, res.After)
				if res, err = Play(context.Background(), sc, opts); err != nil {
					t.Fatalf("second run: %v", err)
				}
			}
			d := res.DoctorSays()
			t.Logf("doctor: %s, ranked first %s, probes %v (%.0f s)", d.Status, d.First, res.Probes, d.Seconds)
			t.Logf("before: %s; after: %s; worst ratio %.2f → %.2f; %.0f s",
				res.Before, res.After, res.Before.Worst(), res.After.Worst(), res.Seconds)
			if len(res.Environment) > 0 {
				t.Logf("this machine (not judged): %v", res.Environment)
			}
			if sc.Expect != "" && !res.Found {
				t.Errorf("%s not reported; findings: %v", sc.Expect, ids(res.Findings))
			}
			for _, f := range res.Findings {
				if f.Severity == finding.Critical && f.ID != sc.Expect && !slices.Contains(sc.Also, f.ID) && !symptom(f.ID) && !Environment(f.ID) {
					t.Errorf("unexpected critical %s on %s: %s", f.ID, f.Host, f.Title)
				}
			}
			if !res.Pass {
				t.Errorf("scenario failed: %s", res.Why)
			}
		})
	}
}

// fellShort reports a failed run whose expected cause was found, with
// nothing unexpected beyond what tolerate accepts: a shortfall the tests
// play once more (on a shared machine here, in an emulated guest in the
// kernel lane), where a missing cause fails at once.
func fellShort(r Result, tolerate func(unexpected string) bool) bool {
	return !r.Pass && !r.Skipped && r.Found && !slices.ContainsFunc(r.Unexpected, func(u string) bool { return !tolerate(u) })
}

func nothingTolerated(string) bool { return false }

// missedATurn reports a clone's case whose only fault is its cause not
// found: the clone takes its key back on WireGuard's own timers (a device
// that lost its session handshakes again after 5 to 15 s), so a 15-second
// bench can fall between two takeovers and see one device (twice in make
// test: the tunnel at 0.96, doctor healthy). It is played once more; a
// second miss fails.
func missedATurn(sc Scenario, r Result) bool {
	return sc.Lab.CloneA && !r.Pass && !r.Skipped && !r.Found && len(r.Unexpected) == 0
}

// usesIptables reports a scenario whose breakage runs iptables.
func usesIptables(sc Scenario) bool {
	return slices.ContainsFunc(sc.Break, func(c Command) bool { return len(c.Argv) > 0 && c.Argv[0] == "iptables" })
}

func ids(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.ID)+"/"+f.Severity.String())
	}
	return out
}

func TestShares(t *testing.T) {
	got := shares([]uint64{1000, 0}, []uint64{3000, 2000})
	if len(got) != 2 || got[0] != 0.5 || got[1] != 0.5 {
		t.Errorf("shares = %v, want [0.5 0.5]", got)
	}
	// A tunnel added between the readings counts from zero.
	got = shares([]uint64{1000}, []uint64{4000, 1000})
	if len(got) != 2 || got[0] != 0.75 || got[1] != 0.25 {
		t.Errorf("shares with a new tunnel = %v, want [0.75 0.25]", got)
	}
}

func TestWriteTable(t *testing.T) {
	results := []*Result{
		{Scenario: "udp-rcvbuf", Symptom: "tunnel crawls", Expect: "udp.rcvbuf-errors", Found: true, Doctor: &DoctorVerdict{Status: "slow", First: "udp.rcvbuf-errors"}, Fix: []string{"sysctl -w net.core.rmem_max=26214400"},
			Before: measured(19, 96, 0, 0), After: measured(92, 96, 0, 0), Sizing: Sizing{RateMbit: 100}, Seconds: 75, Pass: true},
		{Scenario: "ecmp", Skipped: true, Why: "skipped: too slow"},
	}
	var b strings.Builder
	WriteTable(&b, results, false)
	for _, want := range []string{"udp-rcvbuf", "DOCTOR RANKED FIRST", "udp.rcvbuf-errors  udp.rcvbuf-errors", "100 Mbit/s", "19 → 92 Mbit/s", "0.20 → 0.96", "pass", "skip"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestScoreRanksWhatJudgeLooksAt(t *testing.T) {
	worse := measured(90, 96, 70, 96)
	better := measured(80, 96, 90, 96)
	r := &runner{sc: Scenario{}, res: &Result{}}
	if r.score(better, nil) <= r.score(worse, nil) {
		t.Error("both directions: the measurement with the better worst direction must rank first")
	}
	r.sc.UploadOnly = true
	if r.score(worse, nil) <= r.score(better, nil) {
		t.Error("upload-only: the better upload must rank first")
	}
	r = &runner{sc: Scenario{ECMP: 2}, res: &Result{Before: measured(90, 0, 0, 0)}}
	if r.score(measured(180, 0, 0, 0), []float64{0.5, 0.5}) <= r.score(measured(185, 0, 0, 0), []float64{0.9, 0.1}) {
		t.Error("ECMP: an even spread must outrank a lopsided one of about the same total")
	}
}

// An after-fix measurement is taken again when the fix was proven but the
// tunnel measured below the pass mark or below a healthy tunnel's figure;
// never when the fix itself is in doubt, nor for ECMP (judged on scaling).
func TestShortOfHealthy(t *testing.T) {
	fixed := Scenario{Expect: "route.stale-endpoint"}
	for _, tt := range []struct {
		name  string
		sc    Scenario
		res   Result
		again bool
	}{
		{"healthy figure", fixed, Result{Found: true, After: measured(183, 191, 183, 191)}, false},
		{"passed, just above the pass mark", fixed, Result{Found: true, After: measured(183, 191, 173, 191)}, true},
		{"passed well above the pass mark, a little below a healthy tunnel", fixed, Result{Found: true, After: measured(183, 191, 179.1, 191)}, false},
		{"a low pass mark (capped below a knee), passed", Scenario{Expect: "throughput.collapse-knee", UploadOnly: true, MinRatio: 0.35},
			Result{Found: true, After: measured(85, 191, 183, 191)}, false},
		{"fell short of the pass mark", fixed, Result{Found: true, After: measured(150, 191, 183, 191)}, true},
		{"finding not found", fixed, Result{After: measured(150, 191, 0, 0)}, false},
		{"still found after the fix", fixed, Result{Found: true, StillFound: true, After: measured(150, 191, 0, 0)}, false},
		{"unexpected finding", fixed, Result{Found: true, Unexpected: []string{"x"}, After: measured(150, 191, 0, 0)}, false},
		{"doctor ranked another cause first", fixed, Result{Found: true, Doctor: &DoctorVerdict{First: "x"}, After: measured(150, 191, 0, 0)}, false},
		{"upload only", Scenario{Expect: "tcp.congestion-control", UploadOnly: true}, Result{Found: true, After: measured(183, 191, 100, 191)}, false},
		{"ecmp", Scenario{ECMP: 2, MinScaling: 1.7}, Result{Found: true, Before: measured(92, 0, 0, 0), After: measured(183, 0, 0, 0), TunnelShares: []float64{0.5, 0.5}}, false},
	} {
		if tt.res.Doctor == nil {
			tt.res.Doctor = &DoctorVerdict{First: tt.sc.Expect}
		}
		r := &runner{sc: tt.sc, res: &tt.res}
		r.judge()
		if got := r.shortOfHealthy() != ""; got != tt.again {
			t.Errorf("%s: measure again %v, want %v (%q)", tt.name, got, tt.again, r.shortOfHealthy())
		}
	}
}

// bloated judges the after-fix round trip under load, as the bufferbloat scenario does.
var bloated = Scenario{Expect: catalog.LatencyBufferbloat, Latency: true, MinRatio: 0.8}

// queueOn is a bufferbloat warning whose queue sits at where.
func queueOn(where string) finding.Finding {
	return finding.Finding{ID: catalog.LatencyBufferbloat, Severity: finding.Warning,
		Title: "Latency under load: an upload through the tunnel adds 36.5 ms to the round trip (2.98 idle, 39.5 loaded); the queue is " + where}
}

// pinged is an after-fix bench that measured the round trip, with its findings.
func pinged(fs ...finding.Finding) *bench.Report {
	return &bench.Report{IdleLatency: &bench.Latency{Tunnel: &bench.RTT{Sent: 10, Received: 10, MedianMs: 0.6}}, Findings: fs}
}

// pathCycles is the path-cycles scenario's judgement: a symptom the path
// causes, which the path's own change cures.
var pathCycles = Scenario{Expect: catalog.ThroughputOscillation, Probes: []Probe{ProbeLongRun}, PathFix: []Command{on("r", "true")}}

// shapedPathCycles is pathCycles in a lab whose shaper holds a deep queue.
var shapedPathCycles = func() Scenario {
	sc := pathCycles
	sc.Lab = lab.Config{Underlay: lab.Shape{RateMbit: 20}}
	return sc
}()

// longRun is doctor's long run, as a scenario result lists it.
var longRun = []ProbeResult{{ProbeLongRun, "upload, 1 stream for 30 s: 2 collapses every 18 s; the underlay alone for 38 s: 2 collapses every 18 s: the path cycles"}}

// pathCycleFinding is throughput.oscillation with a fix that applies action
// (nil: a command to run, nothing wgperf applies).
func pathCycleFinding(action *finding.Action) finding.Finding {
	return finding.Finding{ID: catalog.ThroughputOscillation, Host: targettest.Spec("netns:wgl-run-a"), Severity: finding.Warning,
		Fixes: []finding.Fix{{Description: "Cap wg-run-a at 160 Mbit/s, below the collapse", Action: action}}}
}

// measured is a Measurement: upload then download, tunnel then underlay.
func measured(up, upUnder, down, downUnder float64) Measurement {
	return Measurement{bench.Throughput{Up: bench.DirRate{Tunnel: up, Underlay: upUnder}, Down: bench.DirRate{Tunnel: down, Underlay: downUnder}}}
}

// The lab's congestion control is added to the host's allowed list only
// where the host does not allow it already (a distro host with CUBIC).
func TestHostSysctlsAllowTheLabsCongestion(t *testing.T) {
	host := func(allowed string) func(string) (string, error) {
		return func(string) (string, error) { return allowed, nil }
	}
	got := hostSysctlsFor(Scenario{}, Sizing{}, "bbr", host("reno cubic"))
	if got[allowedCC] != "reno cubic bbr" || len(got) != 1 {
		t.Errorf("distro host: %v, want the allowed list with bbr", got)
	}
	if got := hostSysctlsFor(Scenario{}, Sizing{}, "bbr", host("reno bbr")); len(got) != 0 {
		t.Errorf("bbr allowed already: %v, want no host change", got)
	}
	sc := Scenario{HostSysctls: map[string]string{allowedCC: "reno cubic", "net.core.rmem_max": "32768"}}
	got = hostSysctlsFor(sc, Sizing{}, "bbr", host("reno bbr"))
	if got[allowedCC] != "reno cubic bbr" || got["net.core.rmem_max"] != "32768" {
		t.Errorf("scenario's own list: %v, want bbr added to it", got)
	}
	if sc.HostSysctls[allowedCC] != "reno cubic" {
		t.Error("the catalog's map was changed")
	}
}

// TestLabQueueIsTheLabs: a queue on the path of a shaped lab is the lab's
// own shaper (true, not the case's); at the tunnel's ends, or where nothing
// is shaped, it stays unexpected, and the bufferbloat case still expects it.
func TestLabQueueIsTheLabs(t *testing.T) {
	bloat := func(where string) finding.Finding {
		return finding.Finding{ID: catalog.LatencyBufferbloat, Severity: finding.Warning, Host: targettest.Spec("a"),
			Title: "Latency under load: an upload through the tunnel adds 120 ms to the round trip (1 idle, 121 loaded); the queue is " + where}
	}
	stale, _ := Lookup("stale-endpoint-route")
	bloated, _ := Lookup("bufferbloat")
	for _, tc := range []struct {
		name       string
		sc         Scenario
		f          finding.Finding
		unexpected bool
		found      bool
	}{
		{"on the path of the backup uplink's shaper", stale, bloat(bench.QueueOnPath), false, false},
		{"at the tunnel's ends", stale, bloat(bench.QueueTunnelEnds), true, false},
		{"on the path of an unshaped lab", Scenario{Name: "x", Expect: catalog.MTUTunnelTooLarge}, bloat(bench.QueueOnPath), true, false},
		{"the bufferbloat case", bloated, bloat(bench.QueueOnPath), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{sc: tc.sc, res: &Result{}}
			r.classify([]finding.Finding{tc.f})
			if got := len(r.res.Unexpected) > 0; got != tc.unexpected {
				t.Errorf("unexpected %v, want %v", r.res.Unexpected, tc.unexpected)
			}
			if r.res.Found != tc.found && tc.sc.Expect != "" {
				t.Errorf("found %v, want %v", r.res.Found, tc.found)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Only a clone's missed cause plays again: not another case's, and not a
// clone's run that found something unexpected.
func TestMissedATurn(t *testing.T) {
	clone, other := Scenario{Lab: lab.Config{CloneA: true}}, Scenario{}
	missed := Result{Why: "wg.shared-key not reported"}
	for _, tt := range []struct {
		name string
		sc   Scenario
		r    Result
		want bool
	}{
		{"a clone's cause missed", clone, missed, true},
		{"another case's cause missed", other, missed, false},
		{"a clone's cause missed beside an unexpected one", clone, Result{Unexpected: []string{"cpu.saturated on a"}}, false},
		{"a clone's cause found", clone, Result{Found: true}, false},
		{"passed", clone, Result{Pass: true, Found: true}, false},
	} {
		if got := missedATurn(tt.sc, tt.r); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
