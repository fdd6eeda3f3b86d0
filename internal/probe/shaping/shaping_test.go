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
)

func step(capMbit int, mbit, cv float64, collapses int) Step {
	return Step{CapMbit: capMbit, Stats: bench.Stats{Mbit: mbit, CV: cv, Collapses: collapses}}
}

func TestRecommend(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  int
	}{
		// The relay case's table: uncapped collapses; 300 and 250 still degrade; 200 and 150 hold.
		{"relay case", []Step{step(0, 165, 0.35, 3), step(300, 276, 0.22, 2), step(250, 231, 0.15, 1), step(200, 200, 0.06, 0), step(150, 142, 0.02, 0)}, 200},
		{"uncapped already stable", []Step{step(0, 190, 0.02, 0), step(150, 148, 0.01, 0)}, 0},
		{"nothing stable: the least varying cap that beats the uncapped mean", []Step{step(0, 120, 0.4, 3), step(150, 140, 0.2, 1), step(130, 125, 0.15, 1)}, 130},
		// Steadier but slower than the uncapped mean is no cure: doctor
		// --thorough on a path whose own rate alternates every 18 s (issue 39)
		// reported a cap holding 27.6 Mbit/s against a mean of 50.3 uncapped.
		{"steadier but slower than the uncapped mean", []Step{step(0, 50.3, 0.45, 2), step(57, 27.6, 0.03, 0)}, 0},
		{"nothing stable, every cap slower than the mean", []Step{step(0, 165, 0.4, 3), step(150, 140, 0.2, 1), step(100, 95, 0.15, 1)}, 0},
		{"a cap clearly faster than stable uncapped", []Step{step(0, 120, 0.05, 0), step(200, 190, 0.03, 0)}, 200},
	}
	for _, tt := range tests {
		if got := Recommend(tt.steps); got != tt.want {
			t.Errorf("%s: recommend %d, want %d", tt.name, got, tt.want)
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
	r := &Result{Client: "netns:a", Device: "wg-a", Steps: []Step{step(0, 165, 0.35, 3), step(200, 200, 0.06, 0), step(150, 142, 0.02, 0)}}
	r.Recommended = Recommend(r.Steps)
	fs := Findings(r)
	if len(fs) != 1 || fs[0].Fixes[0].Action.Kind != remedy.KindTBFCap || fs[0].Fixes[0].Action.Params["rate"] != "200mbit" {
		t.Errorf("findings %+v", fs)
	}
	r = &Result{Client: "netns:a", Device: "wg-a", Steps: []Step{step(0, 190, 0.02, 0)}}
	if fs := Findings(r); len(fs) != 0 {
		t.Errorf("no cap recommended, findings %+v", fs)
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
	if got := Recommend(rec.Shaping.Steps); got != 92 {
		t.Errorf("recommend %d, want 92", got)
	}
	// The same sweep with the uncapped mean above the steady cap: no cure.
	steps := slices.Clone(rec.Shaping.Steps)
	steps[0].Stats.Mbit = 90
	if got := Recommend(steps); got != 0 {
		t.Errorf("a cap slower than the uncapped mean recommended: %d", got)
	}
}
