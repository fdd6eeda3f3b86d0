package bench

import (
	"math"
	"sort"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// Summarise computes a run's statistics from its measured intervals.
func Summarise(res *iperf.Result) Stats {
	st := Stats{Mbit: res.Mbit(), Retransmits: res.Retransmits, LostPercent: res.LostPercent, JitterMs: res.JitterMs}
	ivs := res.Measured()
	var rates []float64
	var cwnd []int64
	for _, iv := range ivs {
		// The last interval of a run is often a fraction of a second: its rate is noise.
		if iv.End-iv.Start < 0.5 {
			continue
		}
		rates = append(rates, iv.Mbit)
		cwnd = append(cwnd, iv.Cwnd...)
	}
	st.CV = cv(rates)
	st.Collapses = collapses(rates)
	if len(cwnd) > 0 {
		sort.Slice(cwnd, func(i, j int) bool { return cwnd[i] < cwnd[j] })
		st.CwndMin, st.CwndMax = cwnd[0], cwnd[len(cwnd)-1]
		st.CwndMedian = cwnd[len(cwnd)/2]
		if res.Streams <= 1 && st.CwndMin > 0 {
			st.CwndSwing = float64(st.CwndMax) / float64(st.CwndMin)
		}
	}
	return st
}

func cv(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / mean
}

// collapses counts how often the rate fell from the run's high level (its
// 90th percentile) to below CollapseFraction of it and later recovered or ended there.
func collapses(rates []float64) int {
	if len(rates) < 3 {
		return 0
	}
	sorted := append([]float64(nil), rates...)
	sort.Float64s(sorted)
	high := sorted[int(math.Ceil(0.9*float64(len(sorted))))-1]
	low := CollapseFraction * high
	n, down := 0, false
	for _, x := range rates {
		switch {
		case x < low && !down:
			n, down = n+1, true
		case x >= 0.85*high:
			down = false
		}
	}
	return n
}
