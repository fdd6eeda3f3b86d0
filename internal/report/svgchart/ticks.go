package svgchart

import (
	"math"
	"strconv"
	"strings"
)

// Tick is a labelled mark on an axis.
type Tick struct {
	Value float64
	Label string
}

// maxTicks is the most ticks an axis gets: enough to read a value off, few
// enough that the labels of a narrow chart do not crowd.
const maxTicks = 6

// Ticks are the marks of an axis from lo to hi: the multiples of the
// smallest round step (1, 2, 2.5 or 5 times a power of ten) that puts at
// most maxTicks of them in the range, labelled without trailing zeros
// ("1500", "1.2"). With whole set the step is a whole number, for axes that
// count (probe 1, 2, 3; failed pings).
func Ticks(lo, hi float64, whole bool) []Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	pow := math.Pow(10, math.Floor(math.Log10((hi-lo)/maxTicks)))
	for ; ; pow *= 10 {
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * pow
			if whole && step != math.Trunc(step) {
				continue // 2.5 or 0.5 counts nothing
			}
			if ts := multiples(lo, hi, step); len(ts) <= maxTicks {
				return ts
			}
		}
	}
}

// multiples are the multiples of step from lo to hi, labelled.
func multiples(lo, hi, step float64) []Tick {
	// A little slack keeps a tick that lands on an end despite rounding.
	eps := step * 1e-9
	first, last := math.Ceil((lo-eps)/step), math.Floor((hi+eps)/step)
	if last-first+1 > maxTicks {
		return make([]Tick, maxTicks+1) // too many: only the count matters
	}
	var ts []Tick
	for i := first; i <= last; i++ {
		v := i * step
		ts = append(ts, Tick{Value: v, Label: label(v, step)})
	}
	return ts
}

// label writes v to the precision of step, without trailing zeros and never
// as "-0".
func label(v, step float64) string {
	digits := max(0, int(math.Ceil(-math.Log10(step)+1e-9))+1) // 2.5×10^k needs one more than 10^k
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
