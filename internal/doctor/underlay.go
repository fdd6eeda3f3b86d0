package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/probe/bench"
)

// UnderlayFailedFraction: an underlay run below this share of the other
// direction's underlay, whose seconds mostly carried next to nothing,
// collapsed. A black hole on the path stalls the hosts' own TCP between them
// too, in the direction where large packets vanish (both ends at 1500,
// nothing clamps): that run is evidence about the path, not a baseline to
// judge the tunnel by.
const UnderlayFailedFraction = 0.1

// silentFraction: a second that carried less than this share of the other
// direction's rate carried next to nothing. A link that is merely slower one
// way (ADSL at 1/16, cable at 1/20) carries its rate every second; a stalled
// TCP delivers nothing after its first window.
const silentFraction = 0.01

// minUnderlayMbit is the least the other direction must carry for this
// one's collapse to mean something.
const minUnderlayMbit = 1.0

// underlayFailures lists the directions ("upload", "download") in which the
// underlay's own single-stream TCP collapsed, or stalled (stalled: the
// direction of an underlay run that never finished). It is pure.
func underlayFailures(rep *bench.Report, stalled string) []string {
	t := rep.Throughput()
	var out []string
	for _, d := range []struct {
		name        string
		rate, other float64
	}{{bench.Upload, t.Up.Underlay, t.Down.Underlay}, {bench.Download, t.Down.Underlay, t.Up.Underlay}} {
		collapsed := d.other >= minUnderlayMbit && d.rate < UnderlayFailedFraction*d.other &&
			mostlySilent(underlayRun(rep, d.name), silentFraction*d.other)
		if d.name == stalled || collapsed {
			out = append(out, d.name)
		}
	}
	return out
}

// underlayRun is the single-stream TCP underlay run of a direction, or nil.
func underlayRun(rep *bench.Report, dir string) *bench.Run {
	return rep.UnderlayRun(dir, 1)
}

// mostlySilent reports whether at least half of a run's measured seconds
// carried less than floor Mbit/s (its average does, when it has none).
func mostlySilent(run *bench.Run, floor float64) bool {
	if run == nil {
		return false
	}
	silent, n := 0, 0
	for _, iv := range run.Result.Measured() {
		if iv.End-iv.Start < 0.5 {
			continue // a run's last fraction of a second is noise
		}
		n++
		if iv.Mbit < floor {
			silent++
		}
	}
	if n == 0 {
		return run.Stats.Mbit < floor
	}
	return 2*silent >= n
}

// stalledSpec is the run a bench that stopped with a stall was on: the one
// after the runs it finished.
func stalledSpec(c bench.Config, rep *bench.Report) (bench.Spec, bool) {
	plan := bench.Plan(c)
	n := 0
	if rep != nil {
		n = len(rep.Runs)
	}
	if n >= len(plan) {
		return bench.Spec{}, false
	}
	return plan[n], true
}

// underlayFailed reports whether the underlay's own TCP collapsed in dir
// ("both": in either).
func (m Measured) underlayFailed(dir string) bool {
	if dir == "both" {
		return len(m.UnderlayFailed) > 0
	}
	return slices.Contains(m.UnderlayFailed, dir)
}

// underlayLine says what the underlay's collapse means, for the status line
// and the MTU probe's reason.
func underlayLine(m Measured) string {
	var parts []string
	for _, dir := range m.UnderlayFailed {
		r, other := m.Up, m.Down
		if dir == bench.Download {
			r, other = m.Down, m.Up
		}
		s := fmt.Sprintf("the underlay's own TCP collapsed in the %s (%.1f Mbit/s", dir, r.Underlay)
		if other.Underlay > 0 {
			s += fmt.Sprintf(" while the other way carried %.1f", other.Underlay)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, "; ")
}
