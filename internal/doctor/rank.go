package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/target"
)

// Measured is what the bench saw, reduced to what ranking needs: per
// direction the tunnel and underlay rates (bench.Report.Throughput: 0 when
// not measured) and whether a run through the tunnel stalled outright.
type Measured struct {
	Benched bool        `json:"benched"` // false: no server, nothing measured
	Client  target.Spec `json:"client"`  // target spec of the upload's sender
	Server  target.Spec `json:"server"`
	bench.Throughput
	Stalled bool `json:"stalled,omitempty"` // a tunnel run never finished (bulk TCP stuck)
	// UnderlayFailed lists the directions in which the underlay's own TCP
	// collapsed or stalled: a path that drops large packets, evidence rather
	// than a baseline (see underlayFailures).
	UnderlayFailed []string `json:"underlay_failed,omitempty"`
	// UnderlayBlocked says why the underlay baseline could not run (iperf3
	// could not reach the far end): nothing to judge the tunnel against.
	UnderlayBlocked string `json:"underlay_blocked,omitempty"`
	// Expected is the tunnel/underlay ratio that counts as healthy.
	Expected float64 `json:"expected"`
	// PathLoss is the share of UDP outside the tunnel the path lost (the
	// highest unpoliced run on wgperf's own port; 0 when none ran).
	PathLoss float64 `json:"path_loss,omitempty"`
}

// deficit is the share of the underlay the tunnel does not carry in this
// direction (0 when healthy or unmeasured; 1 when nothing went through).
func (m Measured) deficit(d bench.DirRate) float64 {
	if !m.Benched || d.Underlay <= 0 {
		return 0
	}
	return max(0, 1-d.Ratio())
}

// directionDeficit is the deficit in dir ("both": the larger); a direction
// whose underlay collapsed carries nothing the path lets through.
func (m Measured) directionDeficit(dir string) float64 {
	up, down := m.deficit(m.Up), m.deficit(m.Down)
	if m.underlayFailed(bench.Upload) {
		up = 1
	}
	if m.underlayFailed(bench.Download) {
		down = 1
	}
	switch dir {
	case "upload":
		return up
	case "download":
		return down
	}
	return max(up, down)
}

// shortOfShaped reports a tunnel measured below what it would carry behind
// the queue discipline that cures bufferbloat (bench.SQMShare of its
// expected share of the underlay) in a direction, or stalled: a rate that
// short has a cause of its own to rank first; a shortfall within the
// shaper's 10% costs less than the cure would.
func (m Measured) shortOfShaped() bool {
	return m.Benched && (m.Stalled || m.directionDeficit("both") > 1-m.Expected*bench.SQMShare)
}

// Cause is one finding ranked by the throughput it explains.
type Cause struct {
	Finding finding.Finding `json:"finding"`
	// Score orders causes; Explains is the share of the underlay's throughput
	// this cause is judged to cost (0..1), Direction which direction it hurts.
	Score     float64 `json:"score"`
	Explains  float64 `json:"explains"`
	Direction string  `json:"direction"` // upload, download, both
	// Gain says what fixing it should bring back, in words and figures.
	Gain string `json:"expected_gain"`
	// Command applies its automatic fix, "" when it has none.
	Command string `json:"command,omitempty"`
	// GapShare is the share of the shortfall measured in its direction that
	// the cause's own evidence can account for (catalog.Doctor.Bound; 0 for a
	// cause of latency while the rate is short), nil where its evidence has
	// no such number or nothing is short.
	GapShare *float64 `json:"gap_share,omitempty"`
	// CannotExplain says why a cause present is not the cause of the
	// shortfall ("present, explains at most 14% of the gap: ..."): it is
	// ranked below every cause that can, and is never the verdict.
	CannotExplain string `json:"cannot_explain,omitempty"`
	// RuntimeOnly is the fix plan's "runtime only: ..." note when that fix
	// cannot outlast a reboot on its host (issue 40); "" when it lasts or was
	// not planned.
	RuntimeOnly string `json:"runtime_only,omitempty"`
}

// doctorOf is what the finding catalog says drives doctor for id. An ID
// outside the catalog (none is: its test holds every check and probe to it)
// is a cause that explains nothing.
func doctorOf(id finding.ID) catalog.Doctor {
	e, _ := catalog.Lookup(id)
	return e.Doctor
}

// Symptom reports whether a finding describes the slowness itself (the bench's
// ratio, asymmetry, oscillation) rather than a cause of it.
func Symptom(id finding.ID) bool { return doctorOf(id).Role == catalog.Symptom }

// hidden reports a cause the tunnel/underlay ratio cannot show (catalog.NotInBench).
func hidden(id finding.ID) bool { return doctorOf(id).Bench == catalog.NotInBench }

// lossLimited reports a congestion-control finding on a path that loses:
// its window held where the loss holds it (bench.LossPinnedKey), or UDP
// outside the tunnel lost udppath.LossyPath or more. The underlay's
// loss-based baseline crawls on the same loss, so the ratio cannot show what
// the algorithm costs (kernel WireGuard on a 2%-loss WAN: 0.87 in one run,
// 0.3 in another).
func lossLimited(f finding.Finding, m Measured) bool {
	if f.ID != catalog.TCPCongestionControl {
		return false
	}
	return m.PathLoss >= udppath.LossyPath || slices.ContainsFunc(f.Evidence, func(e finding.Evidence) bool { return e.Key == bench.LossPinnedKey })
}

// unmeasured reports a cause a throughput measurement cannot verify a fix
// of: "fix --verify" would see no gain and roll the fix back.
func unmeasured(id finding.ID) bool { return doctorOf(id).Verify == catalog.ConfirmOnly }

var sevWeight = map[finding.Severity]float64{finding.Critical: 3, finding.Warning: 2, finding.Info: 0.2}

// Rank orders the findings that are causes (not symptoms) by the throughput
// they explain given what was measured, highest first. It is pure.
//
// A cause's share is its impact, capped by the deficit measured in the
// direction it hurts; a cause whose direction is measured healthy is a latent
// risk (a fifth of its impact); one the ratio cannot show keeps its impact;
// without a bench every cause keeps half its impact (unconfirmed); a cause
// of latency explains a fifth of its impact while the rate is short of
// what its cure would leave. The score
// is that share weighted by severity, so a critical black hole outranks a
// warning about buffers, and any warning outranks an info note.
func Rank(fs []finding.Finding, m Measured) []Cause {
	var out []Cause
	for _, f := range fs {
		if Symptom(f.ID) {
			continue
		}
		imp := impactOf(f)
		c := Cause{Finding: f, Direction: direction(f, m)}
		def := m.directionDeficit(c.Direction)
		switch {
		case !m.Benched:
			c.Explains = imp / 2
		case doctorOf(f.ID).CostsLatency && m.shortOfShaped():
			c.Explains = imp / 5 // true, but it explains none of the rate missing
		case hidden(f.ID), lossLimited(f, m):
			c.Explains = imp
		case (m.Stalled || m.underlayFailed("both")) && doctorOf(f.ID).Role == catalog.Cause && imp >= 0.7:
			c.Explains = imp // a stall costs everything; MTU-class causes explain it
		case def < 1-m.Expected:
			c.Explains = imp / 5
		default:
			c.Explains = min(imp, def)
		}
		c.Score = sevWeight[f.Severity] * c.Explains
		c.Gain = gain(c, m)
		out = append(out, c)
	}
	liftUnderlying(out)
	for i := range out {
		accountFor(&out[i], m)
	}
	latencyBehindRate(out, m)
	sort.SliceStable(out, func(i, j int) bool {
		// A full conntrack table drops the packets every measurement and probe
		// sends on a new flow: what they saw follows from it.
		if a, b := refusesNewFlows(out[i].Finding), refusesNewFlows(out[j].Finding); a != b {
			return a
		}
		// What can explain the shortfall before what is present but cannot.
		if a, b := out[i].CannotExplain == "", out[j].CannotExplain == ""; a != b {
			return a
		}
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		// The cure before the workaround it makes unnecessary.
		if a, b := underlies(out[i].Finding, out[j].Finding), underlies(out[j].Finding, out[i].Finding); a != b {
			return a
		}
		return impactOf(out[i].Finding) > impactOf(out[j].Finding)
	})
	return out
}

// liftUnderlying gives a cause the share and score of the findings it brings
// about (catalog.Doctor.Underlies) when those are reported too: it explains
// what they explain, and its fix cures what theirs work around. Severity
// stays its own, so the lift goes no higher than their score.
func liftUnderlying(cs []Cause) {
	for i := range cs {
		for _, o := range cs {
			if !underlies(cs[i].Finding, o.Finding) {
				continue
			}
			cs[i].Explains = max(cs[i].Explains, o.Explains)
			cs[i].Score = max(cs[i].Score, o.Score)
			if o.Gain != "" && cs[i].Gain != o.Gain && doctorOf(cs[i].Finding.ID).Bench == catalog.NotInBench {
				cs[i].Gain = o.Gain
			}
		}
	}
}

// underlies reports whether a is a root cause of b (its entry names b's ID).
func underlies(a, b finding.Finding) bool {
	return slices.Contains(doctorOf(a.ID).Underlies, b.ID)
}

// impactOf is a finding's impact: its catalog entry's, at most 0.05 for a
// note; a full connection tracking table refuses every new flow (the bench's
// own connections too), so it can cost it all.
func impactOf(f finding.Finding) float64 {
	imp := doctorOf(f.ID).Impact
	switch {
	case f.Severity == finding.Info:
		imp = min(imp, 0.05)
	case refusesNewFlows(f):
		imp = 1.0
	}
	return imp
}

// refusesNewFlows reports a full connection tracking table: the kernel drops
// the packets of new flows, probes' pings and iperf3's connections included.
func refusesNewFlows(f finding.Finding) bool {
	return doctorOf(f.ID).RefusesNewFlows && f.Severity == finding.Critical
}

// direction says which way a finding hurts: host-side receive problems the
// direction that host receives, sender problems the one it sends.
func direction(f finding.Finding, m Measured) string {
	side := doctorOf(f.ID).Side
	recv, send := side == catalog.Receiver, side == catalog.Sender
	switch {
	case recv && f.Host.Same(m.Server), send && f.Host.Same(m.Client):
		return "upload"
	case recv && f.Host.Same(m.Client), send && f.Host.Same(m.Server):
		return "download"
	}
	return "both"
}

// gain says what fixing the cause should bring back.
func gain(c Cause, m Measured) string {
	if !m.Benched {
		return "not measured: give --server to bench the tunnel against its underlay"
	}
	if d := doctorOf(c.Finding.ID); d.Bench == catalog.NotInBench {
		return d.Gain
	}
	var parts []string
	for _, d := range []struct {
		name string
		r    bench.DirRate
	}{{"upload", m.Up}, {"download", m.Down}} {
		if c.Direction != "both" && c.Direction != d.name {
			continue
		}
		if m.underlayFailed(d.name) {
			parts = append(parts, d.name+": bulk TCP crosses the path again (it stalls now, outside the tunnel too)")
			continue
		}
		if d.r.Underlay <= 0 || d.r.Ratio() >= m.Expected {
			continue
		}
		want := m.Expected * d.r.Underlay
		parts = append(parts, fmt.Sprintf("%s %.0f → ≥ %.0f Mbit/s", d.name, d.r.Tunnel, want))
	}
	if m.Stalled && len(parts) == 0 {
		return "bulk transfers complete instead of stalling"
	}
	if len(parts) == 0 {
		return "none measured now: the direction it affects is healthy (a latent risk)"
	}
	if m.underlayFailed("both") {
		return strings.Join(parts, ", ")
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%.0f%% of the underlay)", m.Expected*100)
}

// causeKey is what tells findings apart (key): ID, host, interface and peer.
type causeKey struct {
	id          finding.ID
	host        target.Key
	iface, peer string
}
