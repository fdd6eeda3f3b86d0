package mtu

// WireGuard pads every inner packet to a multiple of 16 bytes (never beyond
// the interface MTU) before it encrypts it, so a TCP segment crosses a
// narrow hop only when its padded size, plus WireGuard's overhead, fits: the
// MSS cliff through the tunnel falls 16 bytes at a time as the path MTU
// shrinks, and a segment a few bytes under the path MTU's share is already
// too big. A DF search that proved the path MTU to within a few bytes
// therefore predicts the cliff almost exactly; the MSS search confirms it
// with two runs and bisects only where the prediction does not hold (a
// sender without padding, offloads that change segment sizes).

// PaddingMultiple is what WireGuard pads inner packets to.
const PaddingMultiple = 16

// innerMTUFits is the largest inner packet that crosses a path of MTU
// pathMTU through a tunnel of MTU tunnelMTU, overhead being WireGuard's
// outer headers: the whole tunnel MTU when its padded packets fit, else the
// largest multiple of 16 that does.
func innerMTUFits(pathMTU, tunnelMTU, overhead int) int {
	room := pathMTU - overhead
	if tunnelMTU <= room {
		return tunnelMTU
	}
	return room / PaddingMultiple * PaddingMultiple
}

// PredictMSSCliff is the largest MSS (iperf3 -M, the TCP_MAXSEG a sender
// clamps to) whose segments cross: the inner packet is the MSS plus the
// inner IP and TCP headers (tcpHeaders: 40 over IPv4, 60 over IPv6; Linux
// counts TCP options inside the clamp).
func PredictMSSCliff(pathMTU, tunnelMTU, overhead, tcpHeaders int) int {
	return innerMTUFits(pathMTU, tunnelMTU, overhead) - tcpHeaders
}

// mssSearch finds the largest MSS whose transfer through the tunnel stays
// healthy, within a budget of runs. It starts from the cliff the DF search
// predicts (lo healthy, hi the first size to collapse), tries the sizes on
// the padding grid before any other, and verifies the byte above the answer.
// It is pure: Next names the MSS to run, Record takes its outcome.
type mssSearch struct {
	floor   int // below it a collapse is not an MTU problem (ReferenceMSS)
	top     int // the largest MSS the tunnel itself carries
	headers int // inner IP + TCP headers: the grid is where MSS+headers is a multiple of 16
	left    int // runs left
	// unpadded: segments cross as they are (TCP outside the tunnel), so no
	// size is likelier than another.
	unpadded bool

	expectLo, expectHi int // the prediction: expectLo healthy, expectHi collapses
	good, bad          int // proven: good healthy, bad collapsed (0: none yet)
	step               int // how far below a collapsed first run the next one goes
}

// newMSSSearch plans a search from a predicted cliff [lo, hi) (hi = lo+1
// when the path MTU is known exactly) within runs runs.
func newMSSSearch(lo, hi, floor, top, headers, runs int) *mssSearch {
	lo, hi = min(max(lo, floor), top), min(max(hi, lo+1), top+1)
	return &mssSearch{floor: floor, top: top, headers: headers, left: runs, expectLo: lo, expectHi: hi, step: 2 * PaddingMultiple}
}

func (m *mssSearch) onGrid(mss int) bool {
	return !m.unpadded && (mss+m.headers)%PaddingMultiple == 0
}

// hasGrid reports a grid size strictly between lo and hi.
func (m *mssSearch) hasGrid(lo, hi int) bool {
	for x := lo + 1; x < hi; x++ {
		if m.onGrid(x) {
			return true
		}
	}
	return false
}

// between is the size to try strictly between lo and hi: the middle one on
// the padding grid when there is one; else, when lo is on the grid (where
// padding puts the cliff), the byte above it; else the middle byte.
func (m *mssSearch) between(lo, hi int) int {
	if hi-lo > 1 && m.onGrid(lo) && !m.hasGrid(lo, hi) {
		return lo + 1
	}
	var grid []int
	for x := lo + 1; x < hi; x++ {
		if m.onGrid(x) {
			grid = append(grid, x)
		}
	}
	if len(grid) > 0 {
		return grid[len(grid)/2]
	}
	return lo + (hi-lo)/2
}

// Next is the MSS to run next; ok is false when the search is over.
func (m *mssSearch) Next() (mss int, ok bool) {
	if m.left <= 0 {
		return 0, false
	}
	switch {
	case m.good == 0 && m.bad == 0:
		return m.expectLo, true // the prediction's healthy side, and the reference rate
	case m.good == 0:
		// Even the predicted size collapsed: step down until one runs.
		if m.bad <= m.floor {
			return 0, false // small segments collapse too: not an MTU problem
		}
		next := max(m.floor, m.bad-m.step)
		m.step *= 2
		return next, true
	case m.bad == 0:
		if m.good >= m.top {
			return 0, false // the tunnel's own MTU crosses: no cliff
		}
		hi := max(m.expectHi, m.good+1)
		if hi-m.good > 1 {
			return m.between(m.good, hi), true
		}
		return hi, true // the byte above: proves the cliff
	case m.bad-m.good > 1:
		return m.between(m.good, m.bad), true
	}
	return 0, false
}

// Record stores a run's outcome.
func (m *mssSearch) Record(mss int, healthy bool) {
	m.left--
	switch {
	case healthy && mss > m.good:
		m.good = mss
		if mss >= m.expectHi {
			// The prediction was low (no padding, another hop): look further
			// up, a padding step at a time, until a size collapses.
			m.expectHi = min(m.top+1, mss+PaddingMultiple)
		}
	case !healthy && (m.bad == 0 || mss < m.bad):
		m.bad = mss
	}
}

// Result is the largest healthy MSS and the smallest that collapsed above
// it (0 when none did or none was found).
func (m *mssSearch) Result() (good, bad int) {
	if m.bad <= m.good {
		return m.good, 0
	}
	return m.good, m.bad
}
