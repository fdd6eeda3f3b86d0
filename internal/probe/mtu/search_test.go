package mtu

import (
	"math/rand"
	"testing"
)

// simulate runs a search against a path whose largest passing size is truth.
// lose reports whether the n-th probe (0-based) is lost although it fits;
// hint > 0 makes every too-big probe report that MTU, as a frag-needed would.
func simulate(s *Search, truth int, lose func(n int) bool, hint int) (result int, found bool, probes int) {
	for {
		size, ok := s.Next()
		if !ok {
			break
		}
		passed := size <= truth && !lose(probes)
		h := 0
		if size > truth {
			h = hint
		}
		probes++
		s.Record(size, passed, h)
		if probes > 1000 {
			panic("search does not end")
		}
	}
	r, f := s.Result()
	return r, f, probes
}

func never(int) bool { return false }

func TestSearchExactWithinBound(t *testing.T) {
	const lo, hi, retries = 1200, 1500, 2
	bound := MaxProbes(lo, hi, retries, 1)
	if bound > 12 {
		t.Fatalf("MaxProbes(1200,1500) = %d, want about log2(301)+retries+2 = 12", bound)
	}
	for truth := lo; truth <= hi; truth++ {
		got, found, n := simulate(NewSearch(lo, hi, retries, 1), truth, never, 0)
		if !found || got != truth {
			t.Fatalf("truth %d: got %d (found %v)", truth, got, found)
		}
		if n > bound {
			t.Fatalf("truth %d: %d probes, bound %d", truth, n, bound)
		}
	}
}

func TestSearchHealthyPathTakesOneProbe(t *testing.T) {
	if _, _, n := simulate(NewSearch(1200, 1500, 2, 1), 1500, never, 0); n != 1 {
		t.Errorf("a path that passes the largest size took %d probes, want 1", n)
	}
}

func TestSearchHintJumpsToTheAnswer(t *testing.T) {
	got, _, n := simulate(NewSearch(1200, 1500, 2, 1), 1400, never, 1400)
	if got != 1400 || n > 3 {
		t.Errorf("frag-needed mtu 1400: got %d in %d probes, want 1400 in <= 3", got, n)
	}
}

func TestSearchSurvivesLostProbes(t *testing.T) {
	const lo, hi, retries = 1200, 1500, 2
	bound := MaxProbes(lo, hi, retries, 1)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		truth := lo + rng.Intn(hi-lo+1)
		// Lose up to `retries` probes, never two in a row.
		lost := map[int]bool{}
		for len(lost) < retries {
			n := rng.Intn(bound)
			if !lost[n-1] && !lost[n+1] {
				lost[n] = true
			}
		}
		got, found, n := simulate(NewSearch(lo, hi, retries, 1), truth, func(n int) bool { return lost[n] }, 0)
		if !found || got != truth {
			t.Fatalf("truth %d, lost probes %v: got %d", truth, lost, got)
		}
		// Each loss may cost another bisection.
		if extra := retries * (MaxProbes(lo, hi, 0, 1)); n > bound+extra {
			t.Fatalf("truth %d: %d probes > bound %d", truth, n, bound+extra)
		}
	}
}

func TestSearchNothingPasses(t *testing.T) {
	s := NewSearch(1200, 1500, 2, 1)
	_, found, n := simulate(s, 0, never, 0)
	if found || n > MaxProbes(1200, 1500, 2, 1) {
		t.Errorf("all probes fail: found %v after %d probes", found, n)
	}
	if s.FirstFailed() != 1200 {
		t.Errorf("first failed = %d, want 1200", s.FirstFailed())
	}
}

func TestSearchResolution(t *testing.T) {
	for truth := 1240; truth <= 1380; truth++ {
		s := NewSearch(1240, 1380, 0, 8)
		got, found, n := simulate(s, truth, never, 0)
		if !found || truth-got >= 8 || got > truth {
			t.Fatalf("truth %d: got %d, want within 8 below", truth, got)
		}
		if n > MaxProbes(1240, 1380, 0, 8) {
			t.Fatalf("truth %d: %d probes", truth, n)
		}
	}
}

func likelySearch(retries int) *Search {
	s := NewSearch(576, 1500, retries, 1)
	s.Likely(LikelyMTUs...)
	return s
}

// TestSearchLikelySizes: a path at a likely size takes the largest size,
// three halvings of the likely sizes, the size above the answer and the
// boundary re-probe; every other path is found within a few bytes in at
// most DFLimit probes, and exactly when it is a likely size.
func TestSearchLikelySizes(t *testing.T) {
	const retries = 1
	for _, l := range LikelyMTUs {
		s := likelySearch(retries)
		s.Limit(DFLimit)
		got, found, n := simulate(s, l, never, 0)
		want := 6
		if l == 1500 {
			want = 1 // the largest size passes at once
		}
		if !found || got != l || n > want || s.FirstFailed() != 0 && s.FirstFailed() != l+1 {
			t.Errorf("path MTU %d: got %d (first failed %d) in %d probes, want it exactly in %d", l, got, s.FirstFailed(), n, want)
		}
	}
	// The PMTUD black hole of a 1400-byte hop: 1500 and 1420 fail, 1380 and
	// 1400 pass, 1401 fails twice.
	if _, _, n := simulate(likelySearch(retries), 1400, never, 0); n != 6 {
		t.Errorf("1400-byte hop: %d probes, want 6", n)
	}
	for truth := 576; truth <= 1500; truth++ {
		s := likelySearch(retries)
		s.Limit(DFLimit)
		got, found, n := simulate(s, truth, never, 0)
		if !found || got > truth || s.FirstFailed() != 0 && s.FirstFailed() <= truth {
			t.Fatalf("truth %d: got %d, first failed %d (found %v)", truth, got, s.FirstFailed(), found)
		}
		if n > DFLimit {
			t.Fatalf("truth %d: %d probes > %d", truth, n, DFLimit)
		}
	}
	// ICMP echo blocked altogether: the largest size, the likely sizes on the
	// way down, the minimum; no re-probe and no bisection through timeouts.
	s := likelySearch(retries)
	if _, found, n := simulate(s, 0, never, 0); found || n != 5 {
		t.Errorf("nothing passes: found %v after %d probes, want 5", found, n)
	}
}
