// Package mtu finds the usable path MTU between two hosts and the WireGuard
// MTU and MSS clamp that fit it, even when ICMP is filtered.
//
// DF pings bisect the path MTU; when large probes vanish without an
// ICMP "fragmentation needed" the path is a PMTUD black hole, and
// TCP MSS stepping through the tunnel locates the throughput cliff. The search
// plans are pure state machines; Probe is the I/O around them.
package mtu

import "slices"

// Search bisects the largest size in [Min, Max] that passes. It probes Max
// first (most paths pass it), jumps to an MTU the network names (an ICMP
// frag-needed or a cached route MTU), and decides each size on one probe. So
// that one lost probe does not halve the answer, it re-probes the boundary (the
// smallest size that failed silently) when it has converged, Retries times in
// all; a boundary that now passes was a lost probe and the search goes on
// above it.
//
// With Likely sizes it narrows the range through those first, halving the
// likely sizes left with each probe (the median of those between the largest
// size that passed and the smallest that failed); a likely size that passes
// is usually the answer, so the size just above it is tried next (edgeTried)
// instead of the midpoint. A path at a likely size takes about five probes,
// any other a few more.
//
// With a Limit the search stops after that many probes, exact or not: the
// answer is then the largest size that passed, and FirstFailed bounds it.
//
// Without loss and without Likely sizes it takes at most MaxProbes(Min, Max, Retries, resolution)
// probes; each lost probe costs at most another ceil(log2(Max-Min+1)) + 1.
type Search struct {
	min, max   int
	good       int          // largest size that passed
	silent     map[int]int  // size -> silent failures
	certain    map[int]bool // sizes known too big (frag-needed said so)
	budget     int          // boundary re-probes left
	hint       int          // an MTU reported by a probe, still to be tried
	started    bool
	triedMin   bool
	resolution int
	limit      int // probes at most (0: no limit)
	probes     int // probes recorded
	// likely are sizes real paths have; a likely size that passes is
	// usually the answer, so the size just above it is tried next
	// (edgeTried) instead of the midpoint.
	likely    []int
	isLikely  map[int]bool
	edgeTried map[int]bool
}

// LikelyMTUs are the path MTUs links commonly have: Ethernet, PPPoE, 6in4
// and tunnels in tunnels, down to the IPv6 minimum.
var LikelyMTUs = []int{1500, 1492, 1480, 1460, 1420, 1400, 1380, 1280}

// Likely makes the search narrow the range through these sizes before
// bisecting: most paths end at one of them, so the answer takes a few probes
// and the size above it, instead of a full bisection.
func (s *Search) Likely(sizes ...int) {
	s.likely = append([]int(nil), sizes...)
	slices.SortFunc(s.likely, func(a, b int) int { return b - a })
	s.isLikely, s.edgeTried = map[int]bool{}, map[int]bool{}
	for _, l := range s.likely {
		s.isLikely[l] = true
	}
}

// Limit stops the search after n probes, exact or not.
func (s *Search) Limit(n int) { s.limit = n }

// NewSearch plans a search over [min, max] with a budget of retries, done when
// the answer is known to within resolution (1 for an exact answer).
func NewSearch(min, max, retries, resolution int) *Search {
	if resolution < 1 {
		resolution = 1
	}
	return &Search{min: min, max: max, good: min - 1, silent: map[int]int{}, certain: map[int]bool{}, budget: retries, resolution: resolution}
}

// bad is the smallest size above good that failed, or max+1.
func (s *Search) bad() int {
	b := s.max + 1
	for size := range s.silent {
		if size > s.good && size < b {
			b = size
		}
	}
	for size := range s.certain {
		if size > s.good && size < b {
			b = size
		}
	}
	return b
}

// Next is the size to probe next; ok is false when the search is over.
func (s *Search) Next() (size int, ok bool) {
	if s.limit > 0 && s.probes >= s.limit {
		return 0, false
	}
	if !s.started {
		s.started = true
		return s.max, true
	}
	bad := s.bad()
	if s.hint > s.good && s.hint < bad {
		h := s.hint
		s.hint = 0
		return h, true
	}
	if l, ok := s.likelyBetween(s.good, bad); ok {
		return l, true
	}
	if s.good < s.min && s.isLikely != nil && !s.triedMin && bad > s.min {
		// No likely size passed: if even the smallest fails, ICMP echo itself
		// is blocked and a bisection below would only collect timeouts.
		s.triedMin = true
		return s.min, true
	}
	if bad-s.good > s.resolution {
		if s.isLikely[s.good] && !s.edgeTried[s.good] {
			s.edgeTried[s.good] = true
			return s.good + s.resolution, true
		}
		return s.good + (bad-s.good)/2, true
	}
	// Converged. With a coarse resolution the lower bound may be untested.
	if s.good < s.min && bad > s.min && !s.triedMin {
		s.triedMin = true
		return s.min, true
	}
	// The boundary again, in case that probe was lost; not when nothing
	// passed at all (ICMP echo blocked: another timeout would prove nothing).
	if bad <= s.max && !s.certain[bad] && s.budget > 0 && (s.good >= s.min || s.isLikely == nil) {
		s.budget--
		return bad, true
	}
	return 0, false
}

// likelyBetween is the median of the likely sizes strictly between lo and
// hi (the larger of two), when there are any.
func (s *Search) likelyBetween(lo, hi int) (int, bool) {
	var in []int
	for _, l := range s.likely {
		if l > lo && l < hi && l >= s.min {
			in = append(in, l)
		}
	}
	if len(in) == 0 {
		return 0, false
	}
	return in[(len(in)-1)/2], true
}

// Record stores a probe's outcome. mtuHint > 0 is an MTU the network named:
// every size above it fails, and it is tried next.
func (s *Search) Record(size int, passed bool, mtuHint int) {
	s.probes++
	switch {
	case passed:
		if size > s.good {
			s.good = size
		}
	case mtuHint > 0 && mtuHint < size:
		s.certain[size] = true
		s.certain[mtuHint+1] = true
		s.hint = mtuHint
	default:
		s.silent[size]++
	}
}

// Result is the largest size that passed; found is false when none did.
func (s *Search) Result() (size int, found bool) {
	return s.good, s.good >= s.min
}

// FirstFailed is the smallest size above the result known to fail, or 0.
func (s *Search) FirstFailed() int {
	if b := s.bad(); b <= s.max {
		return b
	}
	return 0
}

// Silent reports whether size failed without the network naming an MTU.
func (s *Search) Silent(size int) bool { return s.silent[size] > 0 && !s.certain[size] }

// MaxProbes bounds the probes of a search over [min, max] without lost probes:
// Max first, the bisection, the lower bound on a coarse search, one boundary
// re-probe per retry.
func MaxProbes(min, max, retries, resolution int) int {
	n := 1
	for span := max - min + 1; span > resolution; span = (span + 1) / 2 {
		n++
	}
	if resolution > 1 {
		n++
	}
	return n + retries
}
