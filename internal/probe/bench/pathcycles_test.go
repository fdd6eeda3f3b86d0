package bench

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The long run's length follows the cycle the evidence suggests: the lab's
// knee (4.7 s) fits the first 30 s run twice over; an 18 s cycle (the remote
// users case's 15-20 s) needs 38 s; one collapse in 30 s, a cycle at least
// as long, 62 s.
func TestLongRunSizedToTwoCycles(t *testing.T) {
	for _, tc := range []struct {
		c    Cycles
		want int
	}{
		{Cycles{Seconds: 30, Collapses: 7, PeriodSeconds: 4.7, CV: 0.49}, 12},
		{Cycles{Seconds: 30, Collapses: 2, PeriodSeconds: 18, CV: 0.4}, 38},
		{Cycles{Seconds: 30, Collapses: 1, CV: 0.4}, 62},
		{Cycles{Seconds: 30, Collapses: 1, CV: 0.05}, 2},
		{Cycles{Seconds: 30, Collapses: 2, PeriodSeconds: 60, CV: 0.4}, MaxLongSeconds},
	} {
		if got := TwoCyclesSeconds(tc.c.SuggestedPeriod()); got != tc.want {
			t.Errorf("%+v: %d s, want %d", tc.c, got, tc.want)
		}
	}
	if got := UnderlaySeconds(Cycles{Seconds: 30, Collapses: 7, PeriodSeconds: 4.7, CV: 0.49}); got != 12 {
		t.Errorf("underlay run for the knee's cycle: %d s, want 12", got)
	}
}

// A cycle the underlay shares is the path's: the finding says the path
// cycles and proposes no cap; a steady underlay leaves the tunnel's own knee.
func TestSharedCycleIsThePaths(t *testing.T) {
	tunnel := Cycles{Seconds: 30, HighMbit: 96, LowMbit: 31, MeanMbit: 50.3, Depth: 0.68, Collapses: 2, PeriodSeconds: 18, CV: 0.45}
	alike := Cycles{Seconds: 38, HighMbit: 190, LowMbit: 76, MeanMbit: 130, Depth: 0.6, Collapses: 2, PeriodSeconds: 17, CV: 0.4}
	steady := Cycles{Seconds: 38, HighMbit: 191, LowMbit: 186, MeanMbit: 189, Depth: 0.03, CV: 0.01}
	faster := Cycles{Seconds: 38, HighMbit: 190, LowMbit: 76, Collapses: 8, PeriodSeconds: 4, CV: 0.4}
	if !SharedCycle(tunnel, alike) || SharedCycle(tunnel, steady) || SharedCycle(tunnel, faster) {
		t.Errorf("shared: alike %v, steady %v, another period %v; want true, false, false",
			SharedCycle(tunnel, alike), SharedCycle(tunnel, steady), SharedCycle(tunnel, faster))
	}
	f := PathCycleFinding(targettest.Spec("netns:a"), Upload, "198.51.100.2", tunnel, alike)
	if f == nil {
		t.Fatal("no finding for a cycle the path shares")
	}
	if !strings.HasPrefix(f.Title, "The path itself cycles: outside the tunnel the upload swings from 190 to 76 Mbit/s every 17 s") {
		t.Errorf("title %q", f.Title)
	}
	for _, fix := range f.Fixes {
		if fix.Action != nil {
			t.Errorf("a fix to apply for the path's cycle: %+v", fix)
		}
	}
	if got := f.Fixes[0].Commands[0]; got != "iperf3 -c 198.51.100.2 -t 38" {
		t.Errorf("command %q", got)
	}
	if PathCycleFinding(targettest.Spec("netns:a"), Upload, "198.51.100.2", tunnel, steady) != nil {
		t.Error("a steady underlay: the path's cycle reported")
	}
}
