package shaping

import (
	"fmt"
	"math"

	"github.com/wgperf/wgperf/internal/probe/bench"
)

// Prefer is what wins when the steadiest cap is slower than the uncapped
// mean: the steady rate (the remote users' case chose it, for streaming) or
// the higher mean that collapses.
type Prefer string

// The two choices of --prefer.
const (
	PreferSteady Prefer = "steady"
	PreferMean   Prefer = "mean"
)

// Prefers are the values --prefer takes.
var Prefers = []Prefer{PreferSteady, PreferMean}

// ParsePrefer reads --prefer.
func ParsePrefer(s string) (Prefer, error) {
	for _, p := range Prefers {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("--prefer %q: want steady or mean", s)
}

// Hold lengths: the remote users' case held its cap for 60 s and saw
// collapses every 15-20 s uncapped, so a cap is held for FullHoldSeconds or
// three cycles, whichever is longer, at most MaxHoldSeconds.
const (
	FullHoldSeconds = 60
	MaxHoldSeconds  = 300
)

// Hold is how long each cap is held, given the uncapped run's period
// between collapses (0: none seen) and the least the user asked for: 60 s
// or three periods; short, two periods (bench.TwoCyclesSeconds), which can
// miss a cap that collapses less often. It is pure.
func Hold(period float64, short bool, least int) int {
	if short {
		return max(least, bench.TwoCyclesSeconds(period))
	}
	return min(max(least, FullHoldSeconds, int(math.Ceil(3*period))), MaxHoldSeconds)
}

// StableCV: a run is stable when its per-second rate varies by at most
// StableCV and it never collapses.
const StableCV = 0.1

// MinSteadyShare is the least share of the uncapped mean a steady cap must
// carry to be recommended for its steadiness alone (PreferSteady): the
// remote users' case took 142 Mbit/s steady against a mean of 165 (86%); a
// path whose own rate alternated every 18 s (issue 39) held 27.6 against
// 50.3 (55%) capped, which steadies nothing worth half the data.
const MinSteadyShare = 0.75

// Recommend picks the cap: the fastest stable one that beats the uncapped
// mean; with PreferSteady ("" too), when the uncapped run is not stable,
// the fastest stable one that keeps MinSteadyShare of its mean (a trade-off,
// tradeOff); when no cap is stable, the one that varies least and still
// beats the uncapped mean. Uncapped wins when it is stable and within 5% of
// the best, since a cap is a change; 0 is no cap. It is pure.
func Recommend(steps []Step, prefer Prefer) int {
	floor, unCV, unStable := -1.0, -1.0, false
	for _, s := range steps {
		if s.CapMbit == 0 {
			floor, unCV, unStable = s.Stats.Mbit, s.Stats.CV, stable(s)
		}
	}
	enough := floor
	if prefer != PreferMean && !unStable {
		enough = MinSteadyShare * floor
	}
	best, bestMbit, bestCV := 0, -1.0, unCV
	for _, s := range steps {
		if s.CapMbit > 0 && stable(s) && (s.Stats.Mbit > floor || s.Stats.Mbit >= enough) && s.Stats.Mbit > bestMbit {
			best, bestMbit = s.CapMbit, s.Stats.Mbit
		}
	}
	if best > 0 {
		if unStable && floor >= 0.95*bestMbit {
			return 0
		}
		return best
	}
	for _, s := range steps {
		if s.CapMbit > 0 && s.Stats.Mbit > floor && (bestCV < 0 || s.Stats.CV < bestCV) {
			best, bestCV = s.CapMbit, s.Stats.CV
		}
	}
	return best
}

// stable: a run whose per-second rate varies by at most StableCV and that
// never collapses.
func stable(s Step) bool { return s.Stats.CV <= StableCV && s.Stats.Collapses == 0 }

// Stable reports a step that held steady.
func (s Step) Stable() bool { return stable(s) }

// steps returns the uncapped step and the recommended one.
func (r *Result) steps() (un, capped Step) {
	for _, s := range r.Steps {
		if s.CapMbit == 0 {
			un = s
		}
		if r.Recommended > 0 && s.CapMbit == r.Recommended {
			capped = s
		}
	}
	return un, capped
}

// tradeOff reports a recommended cap slower than the uncapped mean.
func tradeOff(r *Result) bool {
	un, capped := r.steps()
	return r.Recommended > 0 && capped.Stats.Mbit < un.Stats.Mbit
}
