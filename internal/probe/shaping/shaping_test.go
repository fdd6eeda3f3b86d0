package shaping

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func step(capMbit int, mbit, cv float64, collapses int) Step {
	return Step{CapMbit: capMbit, Stats: bench.Stats{Mbit: mbit, CV: cv, Collapses: collapses}}
}

func TestRecommend(t *testing.T) {
	tests := []struct {
		name         string
		steps        []Step
		steady, mean int
	}{
		// The remote users' sweep: uncapped 165 on average, collapsing; 300
		// and 250 degrade; 200 held only for a while; 150 held 142 for 60 s.
		// Steady is 142 against a mean of 165: their choice, a trade-off;
		// for the mean, 200 carried more than uncapped and varied least.
		{"the remote users' sweep", []Step{step(0, 165, 0.35, 3), step(300, 276, 0.22, 2), step(250, 231, 0.15, 1), step(200, 200, 0.12, 1), step(150, 142, 0.02, 0)}, 150, 200},
		{"steady only slower than the mean", []Step{step(0, 165, 0.35, 3), step(250, 160, 0.15, 1), step(150, 142, 0.02, 0)}, 150, 0},
		{"a steady cap above the uncapped mean", []Step{step(0, 165, 0.35, 3), step(200, 190, 0.06, 0), step(150, 142, 0.02, 0)}, 200, 200},
		{"uncapped already stable", []Step{step(0, 190, 0.02, 0), step(150, 148, 0.01, 0)}, 0, 0},
		{"nothing stable: the least varying cap that beats the uncapped mean", []Step{step(0, 120, 0.4, 3), step(150, 140, 0.2, 1), step(130, 125, 0.15, 1)}, 130, 130},
		// A path whose own rate alternated every 18 s (issue 39): a cap
		// holding 27.6 Mbit/s against a mean of 50.3 steadies nothing
		// worth half the data, whatever the user prefers.
		{"steady at half the uncapped mean", []Step{step(0, 50.3, 0.45, 2), step(57, 27.6, 0.03, 0)}, 0, 0},
		{"nothing stable, every cap slower than the mean", []Step{step(0, 165, 0.4, 3), step(150, 140, 0.2, 1), step(100, 95, 0.15, 1)}, 0, 0},
		{"a cap clearly faster than stable uncapped", []Step{step(0, 120, 0.05, 0), step(200, 190, 0.03, 0)}, 200, 200},
	}
	for _, tt := range tests {
		if got := Recommend(tt.steps, PreferSteady); got != tt.steady {
			t.Errorf("%s: --prefer steady recommends %d, want %d", tt.name, got, tt.steady)
		}
		if got := Recommend(tt.steps, ""); got != tt.steady {
			t.Errorf("%s: the default recommends %d, want %d (steady)", tt.name, got, tt.steady)
		}
		if got := Recommend(tt.steps, PreferMean); got != tt.mean {
			t.Errorf("%s: --prefer mean recommends %d, want %d", tt.name, got, tt.mean)
		}
	}
}

func TestHold(t *testing.T) {
	tests := []struct {
		period float64
		short  bool
		least  int
		want   int
	}{
		{0, false, 10, 60},    // no cycle seen: a minute
		{17.5, false, 60, 60}, // the remote users' 15-20 s cycles: 60 s holds three
		{25, false, 60, 75},   // slower cycles: three of them
		{200, false, 60, 300}, // bounded
		{5, true, 3, 12},      // the lab's knee, short: two cycles
		{5, true, 20, 20},     // never below what the user asked
		{0, true, 10, 10},     // short, no cycle: what the user asked
		{17.5, false, 90, 90}, // a longer --time holds longer
	}
	for _, tt := range tests {
		if got := Hold(tt.period, tt.short, tt.least); got != tt.want {
			t.Errorf("Hold(%.1f, short %v, least %d) = %d, want %d", tt.period, tt.short, tt.least, got, tt.want)
		}
	}
}

func TestRootQdiscAndRestore(t *testing.T) {
	read := func(name string) qdisc {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "shaping", name))
		if err != nil {
			t.Fatal(err)
		}
		q, ok := parseRootQdisc(strings.NewReader(string(b)))
		if !ok {
			t.Fatalf("%s: no root qdisc", name)
		}
		return q
	}
	def := read("default-pfifo_fast.txt")
	if def.Kind != "pfifo_fast" || def.userAdded() {
		t.Errorf("default %+v", def)
	}
	if got := restoreCommands("wg0", def); len(got) != 1 || strings.Join(got[0], " ") != "tc qdisc del dev wg0 root" {
		t.Errorf("restore default: %v", got)
	}
	user := read("user-tbf.txt")
	if user.Kind != "tbf" || !user.userAdded() || !strings.HasPrefix(user.Options, "rate 150Mbit") {
		t.Errorf("user tbf %+v", user)
	}
	got := restoreCommands("wg0", user)
	if !strings.HasPrefix(strings.Join(got[0], " "), "tc qdisc replace dev wg0 root handle "+user.Handle+" tbf rate 150Mbit burst 1024Kb lat 400ms") {
		t.Errorf("restore user tbf: %v", got)
	}
}

func TestFindingsOnlyWithACap(t *testing.T) {
	r := &Result{Client: targettest.Spec("netns:a"), Device: "wg-a", Steps: []Step{step(0, 165, 0.35, 3), step(200, 200, 0.06, 0), step(150, 142, 0.02, 0)}}
	r.Recommended = Recommend(r.Steps, PreferSteady)
	fs := Findings(r)
	if len(fs) != 1 || fs[0].Fixes[0].Action.Kind != remedy.KindTBFCap || fs[0].Fixes[0].Action.Params["rate"] != "200mbit" {
		t.Errorf("findings %+v", fs)
	}
	r = &Result{Client: targettest.Spec("netns:a"), Device: "wg-a", Steps: []Step{step(0, 190, 0.02, 0)}}
	if fs := Findings(r); len(fs) != 0 {
		t.Errorf("no cap recommended, findings %+v", fs)
	}
}

// The remote users' sweep as a result: the recommendation names the
// trade-off with the sweep's own figures, and --prefer mean keeps no cap.
func TestFindingsNameTheTradeOff(t *testing.T) {
	un := step(0, 165, 0.35, 3)
	un.MinMbit, un.PeriodSeconds, un.Seconds = 90, 17.5, 60
	capped := step(150, 142, 0.02, 0)
	capped.MinMbit, capped.Seconds = 138, 60
	r := &Result{Client: targettest.Spec("ssh:root@vps"), Device: "wg0", HoldSeconds: 60, Steps: []Step{un, step(250, 160, 0.15, 1), capped}}
	r.Recommended = Recommend(r.Steps, PreferSteady)
	r.TradeOff = tradeOff(r)
	fs := Findings(r)
	if !r.TradeOff || len(fs) != 1 {
		t.Fatalf("trade-off %v, findings %+v", r.TradeOff, fs)
	}
	for _, want := range []string{"steady 142.0 Mbit/s", "mean of 165.0 uncapped with collapses every 18 s (to 90.0)", "a trade-off"} {
		if !strings.Contains(fs[0].Title, want) {
			t.Errorf("title %q lacks %q", fs[0].Title, want)
		}
	}
	if len(fs[0].Evidence) != 3 || !strings.Contains(fs[0].Evidence[2].Key, "cap 150 Mbit/s for 60 s") || !strings.HasSuffix(fs[0].Evidence[2].Value, "steady") {
		t.Errorf("evidence, one line per step: %+v", fs[0].Evidence)
	}
	if fs[0].Fixes[0].Action.Params["rate"] != "150mbit" {
		t.Errorf("fix %+v", fs[0].Fixes)
	}
	if got := r.Summary(); !strings.Contains(got, "a trade-off: steady 142 vs 165 mean with collapses every 18 s") {
		t.Errorf("summary %q", got)
	}
	r.Options.Prefer = PreferMean
	if r.Recommended = Recommend(r.Steps, PreferMean); r.Recommended != 0 || len(Findings(r)) != 0 {
		t.Errorf("--prefer mean: cap %d", r.Recommended)
	}
}

// The lab's knee (wireguard-go, collapse cycles every 4.7 s), recorded by
// doctor: uncapped the long run averaged 60.3 Mbit/s; a 104 Mbit/s cap still
// collapsed (86.8, cv 0.37) and a 92 Mbit/s cap held 88.6 steady: steadier
// and faster than the uncapped mean, the cure.
func TestRecommendOnRecordedKneeSweep(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "doctor", "testdata", "collapse-knee.recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Shaping *Result }
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if got := Recommend(rec.Shaping.Steps, PreferMean); got != 92 {
		t.Errorf("recommend %d, want 92", got)
	}
	// The same sweep with the uncapped mean above the steady cap: a
	// trade-off the user may take, or not.
	steps := slices.Clone(rec.Shaping.Steps)
	steps[0].Stats.Mbit = 90
	if got := Recommend(steps, PreferMean); got != 0 {
		t.Errorf("--prefer mean: a cap slower than the uncapped mean recommended: %d", got)
	}
	if got := Recommend(steps, PreferSteady); got != 92 {
		t.Errorf("--prefer steady: recommend %d, want 92 (88.6 steady against a mean of 90)", got)
	}
}

// Sweeps recorded by wgperf shape-sweep --short in the lab, read again from
// their iperf3 runs: the knee (lab up --knee 60: uncapped 54.1 Mbit/s
// collapsing every 4.5 s; 94 still collapsed, 83 and 73 held) and a path
// cycling every 12 s between its rate and 70% of it (uncapped 152.3; a
// 130 Mbit/s cap held 125.4 steady: 82% of the mean, a trade-off).
func TestRecommendOnRecordedSweeps(t *testing.T) {
	tests := []struct {
		file             string
		steady, mean     int
		tradeOff         bool
		title            string
		uncappedCollapse int
	}{
		{"knee-sweep.json", 83, 83, false, "Capped at 83 Mbit/s the tunnel is steadier and faster: 80.0 Mbit/s", 5},
		{"path-cycle-sweep.json", 130, 0, true, "holds a steady 125.4 Mbit/s (slowest second 120.9) against a mean of 152.3 uncapped: steady for 82% of the mean, a trade-off", 0},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "shaping", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		var rec Result
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		r := &Result{Client: rec.Client, Device: rec.Device, HoldSeconds: rec.HoldSeconds}
		for _, s := range rec.Steps {
			r.Steps = append(r.Steps, Measured(s.CapMbit, s.Result))
		}
		if un := r.Steps[0]; un.CapMbit != 0 || un.Stats.Collapses != tt.uncappedCollapse {
			t.Errorf("%s: uncapped %+v, want %d collapses", tt.file, un.Stats, tt.uncappedCollapse)
		}
		if got := Recommend(r.Steps, PreferMean); got != tt.mean {
			t.Errorf("%s: --prefer mean recommends %d, want %d", tt.file, got, tt.mean)
		}
		r.Recommended = Recommend(r.Steps, PreferSteady)
		r.TradeOff = tradeOff(r)
		if r.Recommended != tt.steady || r.TradeOff != tt.tradeOff {
			t.Errorf("%s: --prefer steady recommends %d (trade-off %v), want %d (%v)", tt.file, r.Recommended, r.TradeOff, tt.steady, tt.tradeOff)
		}
		fs := Findings(r)
		if len(fs) != 1 || !strings.Contains(fs[0].Title, tt.title) || len(fs[0].Evidence) != len(r.Steps) {
			t.Errorf("%s: findings %+v, want one whose title says %q, with a line per step", tt.file, fs, tt.title)
		}
	}
}

// The sweep's text names every cap with its mean and slowest second, and
// the choice with its trade-off.
func TestWriteTextOnRecordedSweep(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "shaping", "path-cycle-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"each cap held 24 s, --short", "130 Mbit/s  24       125.4  120.9", "Recommended cap 130 Mbit/s, a trade-off: steady 125 vs 152 mean (--prefer mean: no cap)", "$ tc qdisc replace dev wg-swpp-a root tbf rate 130mbit"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	if s := r.Summary(); !strings.HasPrefix(s, "each cap held 24 s (short: two cycles): uncapped: 152.3 Mbit/s (slowest second 121.5, 0 collapses), cap 170: 145.6") {
		t.Errorf("summary %q", s)
	}
}
