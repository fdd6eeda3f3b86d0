package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A 30-second run through the lab's knee (lab --knee 60: past 60% of a
// 200 Mbit/s link, A's tunnel packets collapse to half for 4 s), recorded by
// doctor's long run: it climbs to about 116 Mbit/s and falls to about 31,
// seven times, every 4-5 s. A steady 3-second run has no cycles.
func TestCyclesOf(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "knee-30s.result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res iperf.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	c := CyclesOf(&res)
	if c.Seconds != 30 || c.Collapses != 7 || c.PeriodSeconds < 4 || c.PeriodSeconds > 5 || c.Depth < 0.6 || !c.Oscillating() {
		t.Errorf("cycles %+v, want 7 collapses every 4-5 s over 30 s, deeper than 60%%", c)
	}
	f := CycleFinding("netns:a", "netns:b", Upload, targettest.Spec("netns:a"), "wg-a", c)
	if f == nil || f.ID != catalog.ThroughputOscillation || len(f.Fixes) != 1 || f.Fixes[0].Action != nil ||
		f.Fixes[0].Commands[0] != "wgperf shape-sweep --client netns:a --server netns:b --caps 104,93,81" {
		t.Fatalf("finding %+v, want throughput.oscillation with the sweep of three caps below 116 Mbit/s and no cap", f)
	}
	if f := CycleFinding("netns:a", "netns:b", Download, targettest.Spec("netns:b"), "wg-b", c); f.Fixes[0].Commands[0] != "wgperf shape-sweep --client netns:b --server netns:a --interface wg-b --caps 104,93,81" {
		t.Errorf("a download's sweep caps its sender, the server: %q", f.Fixes[0].Commands[0])
	}
	steady := CyclesOf(recorded(t, "tcp-upload.json"))
	if steady.Oscillating() || CycleFinding("a", "b", Upload, targettest.Spec("a"), "wg0", steady) != nil {
		t.Errorf("a steady run oscillates: %+v", steady)
	}
}

// The sweep's caps: whole Mbit/s below the level the run climbed to, none
// twice, none below MinCapMbit; the lab's knee at 20 Mbit/s climbed to 9.
func TestCapsBelow(t *testing.T) {
	for _, tt := range []struct {
		high float64
		want []int
	}{
		{200, []int{180, 160, 140}},
		{9, []int{8, 7, 6}},
		{4, []int{3}},
		{2.5, []int{2}},
		{2, nil},
		{0, nil},
	} {
		if got := CapsBelow(tt.high); !slices.Equal(got, tt.want) {
			t.Errorf("CapsBelow(%v) = %v, want %v", tt.high, got, tt.want)
		}
	}
}
