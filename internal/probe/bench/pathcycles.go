package bench

import (
	"fmt"
	"math"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// MaxLongSeconds bounds a long run sized to a slow cycle: two cycles of 44 s.
const MaxLongSeconds = 90

// minUnderlaySeconds is the shortest underlay run that checks a tunnel's
// cycle: a few seconds of slow start would otherwise read as a collapse.
const minUnderlaySeconds = 10

// SuggestedPeriod is the cycle length a run's collapses suggest, in seconds:
// their period; with one collapse, the cycle is at least as long as the run
// could show (its length); 0 when the run does not cycle.
func (c Cycles) SuggestedPeriod() float64 {
	switch {
	case c.Collapses >= 2:
		return c.PeriodSeconds
	case c.Collapses == 1 && c.CV >= OscillationCV:
		return float64(c.Seconds)
	}
	return 0
}

// TwoCyclesSeconds is how long a run must be to hold two whole cycles of
// period seconds, wherever in the cycle it starts (a mean over part of a
// cycle leans towards whichever phase it caught), at most MaxLongSeconds.
func TwoCyclesSeconds(period float64) int {
	return min(int(math.Ceil(2*period))+2, MaxLongSeconds)
}

// UnderlaySeconds is the underlay run that checks whether the path itself
// has the tunnel's cycle: two of them, at least minUnderlaySeconds.
func UnderlaySeconds(tunnel Cycles) int {
	return max(TwoCyclesSeconds(tunnel.SuggestedPeriod()), minUnderlaySeconds)
}

// SharedCycle reports a cycle the underlay shares: the tunnel collapsed, and
// the link under it, measured alone in the same direction, oscillates too, at
// a period within 1.5× of the tunnel's (periods read from a few collapses
// are rough). The cycle is the path's then, not the tunnel's: no cap on the
// tunnel steadies what the path under it does.
func SharedCycle(tunnel, underlay Cycles) bool {
	if tunnel.Collapses == 0 || !underlay.Oscillating() {
		return false
	}
	tp := tunnel.SuggestedPeriod()
	if tunnel.Collapses < 2 {
		return underlay.PeriodSeconds >= tp/1.5 // one collapse: its cycle is at least that long
	}
	r := underlay.PeriodSeconds / tp
	return r >= 1/1.5 && r <= 1.5
}

// PathCycleFinding is throughput.oscillation for a cycle the underlay shares
// (SharedCycle): the path cycles, in direction dir, sender to underlayAddr;
// the finding proposes no cap, only the measurement that shows it. It is
// pure.
func PathCycleFinding(sender target.Spec, dir, underlayAddr string, tunnel, underlay Cycles) *finding.Finding {
	if !SharedCycle(tunnel, underlay) {
		return nil
	}
	watch := []string{"-c", underlayAddr, "-t", fmt.Sprint(UnderlaySeconds(tunnel))}
	if dir == Download {
		watch = append(watch, "-R")
	}
	return &finding.Finding{
		ID: catalog.ThroughputOscillation, Severity: finding.Warning, Host: sender,
		Title: fmt.Sprintf("The path itself cycles: outside the tunnel the %s swings from %.0f to %.0f Mbit/s every %.0f s, as the tunnel does (%.0f → %.0f Mbit/s)",
			dir, underlay.HighMbit, underlay.LowMbit, underlay.PeriodSeconds, tunnel.HighMbit, tunnel.LowMbit),
		Detail: "The link under the tunnel, measured alone in the same direction, rises and falls with the tunnel's period: the cycle is the " +
			"path's (a shaper, a link whose capacity changes, a scheduled or shared uplink), not a knee of the tunnel's. A rate cap on the " +
			"tunnel would only slow it in the good phase; look at the path, or its owner.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("tunnel: collapses in %d s, every", tunnel.Seconds),
				Value: fmt.Sprintf("%d, %.1f s (%.0f → %.0f Mbit/s, mean %.1f)", tunnel.Collapses, tunnel.SuggestedPeriod(), tunnel.HighMbit, tunnel.LowMbit, tunnel.MeanMbit)}.Of(float64(tunnel.Collapses), finding.Count),
			finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("underlay alone: collapses in %d s, every", underlay.Seconds),
				Value:     fmt.Sprintf("%d, %.1f s (%.0f → %.0f Mbit/s, mean %.1f)", underlay.Collapses, underlay.PeriodSeconds, underlay.HighMbit, underlay.LowMbit, underlay.MeanMbit),
				Threshold: "< 2 (a steady underlay: the tunnel's own knee)"}.Of(float64(underlay.Collapses), finding.Count),
		},
		Fixes: []finding.Fix{{
			Description: "Watch the link under the tunnel alone over two of its cycles",
			Commands:    []string{shell.Join("iperf3", watch...)},
		}},
	}
}
