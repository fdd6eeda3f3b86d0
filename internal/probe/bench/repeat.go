package bench

import (
	"fmt"
	"math"
	"slices"
)

// DefaultSamples is how many runs a cell may take at most: the tuning guide
// asks for repeated runs on a bouncing link, and three give a median that one
// odd run cannot move.
const DefaultSamples = 3

// SettleSigmas is how many of a sample's standard errors its ratio must stand
// from the expectation for one run per path to settle the verdict. One: the
// intervals' spread overstates a shaped link's, whose token bucket sends in
// bursts that one-second intervals catch unevenly while its mean is exact
// (measured in the lab: back-to-back 4 s samples agreed within 0.5%, 18.4 and
// 18.3, 91.6 and 91.3 Mbit/s, where their intervals' standard error said
// 2 to 4%).
const SettleSigmas = 1.0

// Repeat is a later run of a cell's spec, made because the first could not
// settle the cell's verdict (Unsettled). Its intervals are not kept: the
// first run's stand for the shape, the repeats for the level.
type Repeat struct {
	Mbit        float64 `json:"mbit"`
	CV          float64 `json:"cv"`
	Retransmits int64   `json:"retransmits"`
	// IperfJSON is the file of its iperf3 -J document (bench --iperf3-json).
	IperfJSON string `json:"iperf3_json,omitempty"`
}

// Spread is a run's samples: the first run and its repeats.
type Spread struct {
	Samples int     `json:"samples"`
	Min     float64 `json:"min_mbit"`
	Median  float64 `json:"median_mbit"`
	Max     float64 `json:"max_mbit"`
}

// Spread is the run's rate over its samples (one when never repeated).
func (run Run) Spread() Spread {
	xs := []float64{run.Stats.Mbit}
	for _, r := range run.Repeats {
		xs = append(xs, r.Mbit)
	}
	slices.Sort(xs)
	return Spread{Samples: len(xs), Min: xs[0], Median: median(xs), Max: xs[len(xs)-1]}
}

// Rate is the run's figure: the median of its samples.
func (run Run) Rate() float64 { return run.Spread().Median }

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// sampleError is the relative standard error of one run's mean rate: its
// intervals' spread over the root of their count. A short run of a steady
// link is sure to a percent; three seconds of a bouncing one are not.
func sampleError(run *Run) float64 {
	n := 0
	if run.Result != nil {
		for _, iv := range run.Result.Measured() {
			if iv.End-iv.Start >= 0.5 {
				n++
			}
		}
	}
	if n < 2 {
		return 0
	}
	return run.Stats.CV / math.Sqrt(float64(n))
}

// Unsettled reports whether a cell's verdict still rests on too little: with
// one sample per path, its ratio falls short of the expectation by less than
// SettleSigmas standard errors; with two, they fall on either side of it. A
// third sample's median decides, and none is asked for beyond max. A first
// sample that clears the line stands: the tunnel carried that rate, and what
// makes short samples wrong (another job, a slow phase) makes them low. It
// is pure.
func Unsettled(c Cell, tunnel, underlay *Run, max int) bool {
	if tunnel == nil || underlay == nil || c.UnderlayMbit <= 0 {
		return false
	}
	n := min(1+len(tunnel.Repeats), 1+len(underlay.Repeats))
	if n >= max {
		return false
	}
	if n == 1 {
		noise := c.Ratio * math.Hypot(sampleError(tunnel), sampleError(underlay))
		return c.Ratio < c.Expected && c.Expected-c.Ratio < SettleSigmas*noise
	}
	above := 0
	for i := range n {
		if sampleMbit(tunnel, i) >= c.Expected*sampleMbit(underlay, i) {
			above++
		}
	}
	return above != 0 && above != n
}

// sampleMbit is the i-th sample of a run (0: the run itself).
func sampleMbit(run *Run, i int) float64 {
	if i == 0 {
		return run.Stats.Mbit
	}
	return run.Repeats[i-1].Mbit
}

// again is a spec to run once more and why.
type again struct {
	Spec
	why string
}

// unsettledSpecs lists the specs to run again, tunnel and underlay side by
// side, for the report's unsettled cells.
func unsettledSpecs(r *Report, max int) []again {
	var out []again
	for _, c := range r.Cells {
		t, u := find(r, PathTunnel, c.Direction, c.Streams), find(r, PathUnderlay, c.Direction, c.Streams)
		why := ""
		switch {
		case Unsettled(c, t, u, max):
			why = "one sample is too close to call"
		case r.lossUnsettled(c, t, u, max):
			why = "too few retransmits to tell the path's loss"
		default:
			continue
		}
		out = append(out, again{t.Spec, why}, again{u.Spec, why})
	}
	return out
}

// lossUnsettled reports whether a cell's single loss-based tunnel stream,
// which nothing else marks (no swing, not short), retransmitted too few
// times to tell whether the path's loss pins its window: the share counted
// so far (pathLoss) is below PinningLoss, within two of its standard errors
// (a Poisson count's root), and the window would be pinned at PinningLoss.
// More samples of both paths count more of the path's loss.
func (r *Report) lossUnsettled(c Cell, tunnel, underlay *Run, max int) bool {
	if tunnel == nil || underlay == nil || tunnel.Result == nil || tunnel.Streams != 1 || tunnel.Result.Protocol != "tcp" ||
		!lossBased(tunnel.Result.Congestion) || tunnel.Stats.Retransmits == 0 || !c.OK || tunnel.Stats.CwndSwing >= CwndSwing {
		return false
	}
	if min(1+len(tunnel.Repeats), 1+len(underlay.Repeats)) >= max {
		return false
	}
	loss, retransmits := r.pathLoss(*tunnel)
	if loss >= PinningLoss || loss*(1+2/math.Sqrt(retransmits)) < PinningLoss {
		return false
	}
	_, pinnedAtFloor := lossPinned(*tunnel, PinningLoss)
	return pinnedAtFloor
}

// addRepeat files a repeat under the first run of its spec.
func addRepeat(r *Report, again Run) {
	first := findHop(r, again.Path, again.Direction, again.Streams, again.Hop)
	if first == nil || again.Result == nil {
		return
	}
	if first.TCP == nil { // the first run's flows were not read
		first.TCP = again.TCP
	}
	st := Summarise(again.Result)
	first.Repeats = append(first.Repeats, Repeat{Mbit: st.Mbit, CV: st.CV, Retransmits: st.Retransmits, IperfJSON: again.IperfJSON})
}

// spreadText is a repeated run's figure for the tables: its median and range.
func spreadText(run Run) string {
	s := run.Spread()
	if s.Samples < 2 {
		return fmt.Sprintf("%.1f", run.Stats.Mbit)
	}
	return fmt.Sprintf("%.1f (median of %d: %.1f..%.1f)", s.Median, s.Samples, s.Min, s.Max)
}
