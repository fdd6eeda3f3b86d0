package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
)

// ExplainsGap: a cause whose own evidence accounts for less than this share
// of the shortfall measured in its direction is present, not the cause (5%
// steal against a tunnel 18% short; 11% against one at 19 of 92 Mbit/s).
const ExplainsGap = 0.5

// accountFor holds a cause to what its own evidence can explain of the
// shortfall in its direction: a cause of latency none of it while the rate
// is short of what its cure would leave; a cause whose evidence has the
// number (catalog.Doctor.Bound) at most that bound. Below ExplainsGap it is
// marked CannotExplain. Nothing short (healthy, unmeasured): unchanged.
func accountFor(c *Cause, m Measured) {
	if !m.Benched || refusesNewFlows(c.Finding) {
		return
	}
	d := doctorOf(c.Finding.ID)
	if d.CostsLatency {
		if m.shortOfShaped() {
			c.explainsNoRate()
		}
		return
	}
	gap := m.directionDeficit(c.Direction)
	if gap <= 1-m.Expected {
		return
	}
	bound, what, ok := evidenceBound(c.Finding, m, c.Direction)
	if !ok {
		return
	}
	share := min(1, bound/gap)
	c.setShare(share, gap)
	if share < ExplainsGap {
		c.CannotExplain = fmt.Sprintf("present, explains at most %.0f%% of the gap: %s, against a tunnel %.0f%% short of the underlay",
			100*share, what, 100*gap)
	}
}

// explainsNoRate marks a cause of latency as explaining none of the gap.
func (c *Cause) explainsNoRate() {
	c.setShare(0, 0)
	c.CannotExplain = "present, explains none of the gap: it costs round trip under load, not rate"
}

// latencyBehindRate marks the causes of latency as explaining none of the
// gap when the tunnel is short of its expected share and a cause of rate
// accounts for most of the gap in its direction, however short: the queue
// is true, the rate cause is the verdict. Kernel WireGuard fragmenting on a
// 1400-byte hop carried 0.82 of the underlay with a queue on the path (+53
// ms), and the queue's fixed impact outranked the MTU that cost the rate.
func latencyBehindRate(cs []Cause, m Measured) {
	if !m.Benched || m.directionDeficit("both") <= 1-m.Expected || !slices.ContainsFunc(cs, func(c Cause) bool { return explainsRate(c, m) }) {
		return
	}
	for i := range cs {
		if doctorOf(cs[i].Finding.ID).CostsLatency && cs[i].CannotExplain == "" {
			cs[i].explainsNoRate()
		}
	}
}

// explainsRate reports a cause of rate (not of latency, not the machine's
// environment) judged to cost at least ExplainsGap of the shortfall in its
// direction.
func explainsRate(c Cause, m Measured) bool {
	d := doctorOf(c.Finding.ID)
	gap := m.directionDeficit(c.Direction)
	return d.Role == catalog.Cause && !d.CostsLatency && c.CannotExplain == "" && gap > 1-m.Expected && c.Explains >= ExplainsGap*gap
}

// setShare records the share of gap the cause can explain and caps what it
// is judged to cost (and its score) by it.
func (c *Cause) setShare(share, gap float64) {
	c.GapShare = &share
	if ex := share * gap; ex < c.Explains {
		if c.Explains > 0 {
			c.Score *= ex / c.Explains
		}
		c.Explains = ex
	}
}

// evidenceBound is the most of the underlay's throughput f's own evidence
// lets it cost in dir ("both": the direction shorter of its underlay), in
// words too, and whether its evidence has the number (catalog.Doctor.Bound).
func evidenceBound(f finding.Finding, m Measured, dir string) (float64, string, bool) {
	b := doctorOf(f.ID).Bound
	if b.As == 0 {
		return 0, "", false
	}
	i := slices.IndexFunc(f.Evidence, func(e finding.Evidence) bool {
		return e.Unit == b.As.Unit() && strings.Contains(e.Key, b.Key)
	})
	if i < 0 {
		return 0, "", false
	}
	n := f.Evidence[i].Number
	switch b.As {
	case catalog.ShareTaken:
		return min(1, max(0, n/100)), fmt.Sprintf("it takes %.0f%% (%s)", n, f.Evidence[i].Key), true
	case catalog.RateHeld:
		u := m.underlayIn(dir)
		if u <= 0 {
			return 0, "", false
		}
		return max(0, 1-n/u), fmt.Sprintf("it lets %.0f Mbit/s through (%s) of the %.0f the underlay carried", n, f.Evidence[i].Key, u), true
	}
	return 0, "", false
}

// underlayIn is the underlay's rate in dir; for "both", in the direction
// whose tunnel falls shorter of it.
func (m Measured) underlayIn(dir string) float64 {
	if dir == "both" {
		dir = bench.Upload
		if m.directionDeficit(bench.Download) > m.directionDeficit(bench.Upload) {
			dir = bench.Download
		}
	}
	if dir == bench.Download {
		return m.Down.Underlay
	}
	return m.Up.Underlay
}
