package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/doctor"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/shaping"
)

// HealthyRatio is what a healthy lab tunnel measures against its underlay:
// its headers (60 bytes of a 1480-byte datagram, and a smaller TCP payload)
// cap it near 0.957.
const HealthyRatio = 0.95

// marginalPass is how far above its pass mark an after-fix ratio still
// counts as marginal, worth measuring again: most passes measure well above
// it, and a second measurement of each costs the catalog a minute and more.
const marginalPass = 0.03

// shortOfHealthy says why the after-fix measurement is worth taking again:
// a fix that was proven (its finding found, gone after it, nothing
// unexpected) but a tunnel that measured below the pass mark, or only just
// above it and below what a healthy tunnel of the lab's shape measures. ""
// when it is not (doctor's wrong answer is not a throughput shortfall).
func (r *runner) shortOfHealthy() string {
	res := r.res
	if !res.Found || len(res.Unexpected) > 0 || res.StillFound || res.DoctorMissed != "" {
		return ""
	}
	if !res.Pass {
		return res.Why
	}
	if r.sc.ECMP > 1 {
		return ""
	}
	ratio := res.After.Worst()
	if r.sc.UploadOnly {
		ratio = res.After.Up.Ratio()
	}
	if ratio < min(HealthyRatio, r.passMark()+marginalPass) {
		return fmt.Sprintf("ratio %.2f, just above the pass mark %.2f; a healthy tunnel of this shape measures %.2f", ratio, r.passMark(), HealthyRatio)
	}
	return ""
}

// score ranks two after-fix measurements by what judge looks at.
func (r *runner) score(m Measurement, shares []float64) float64 {
	switch {
	case r.sc.ECMP > 1:
		if len(shares) == 0 || m.Up.Tunnel <= 0 || r.res.Before.Up.Tunnel <= 0 {
			return 0
		}
		return m.Up.Tunnel / r.res.Before.Up.Tunnel * slices.Min(shares)
	case r.sc.UploadOnly:
		return m.Up.Ratio()
	}
	return m.Worst()
}

// classify sorts doctor's findings into the expected one, the ones the case
// legitimately causes, the machine's, and unexpected ones.
func (r *runner) classify(fs []finding.Finding) {
	r.res.Findings = fs
	for _, f := range r.res.Findings {
		switch {
		case f.ID == r.sc.Expect:
			r.res.Found = true
			r.logf("found %s on %s: %s", f.ID, f.Host, f.Title)
		case slices.Contains(r.sc.Also, f.ID) || symptom(f.ID):
		case r.labQueue(f):
			r.logf("the lab's shaper: %s on %s: %s (its queue holds %s: a true finding, not this case's)", f.ID, f.Host, f.Title, lab.ShaperQueue)
		case Environment(f.ID):
			r.res.Environment = append(r.res.Environment, string(f.ID)+" on "+f.Host.String())
			r.logf("this machine: %s on %s: %s (reported, not judged: the lab shares the machine's CPUs)", f.ID, f.Host, f.Title)
		case f.Severity >= finding.Warning:
			r.res.Unexpected = append(r.res.Unexpected, unexpectedName(f))
		}
	}
	if r.sc.Expect == "" {
		r.res.Found = len(r.res.Unexpected) == 0
	}
}

// labQueue reports a bufferbloat finding the lab's own shaper explains (LabQueue).
func (r *runner) labQueue(f finding.Finding) bool { return LabQueue(r.sc.Lab, f) }

// LabQueue reports a bufferbloat finding that the lab's own shaper explains:
// a queue on the path, where every shaped link holds lab.ShaperQueue (deep
// on purpose, see lab's tbf), which a CUBIC sender or a slow backup uplink
// fills in any case. A queue at the tunnel's ends, or one in an unshaped
// lab, stays unexpected.
func LabQueue(cfg lab.Config, f finding.Finding) bool {
	return f.ID == catalog.LatencyBufferbloat && cfg.Shaped() && bench.QueueOf(f) == bench.QueueOnPath &&
		lab.ShaperQueue.Seconds()*1000 > bench.BloatMs
}

// firstIsLabQueue reports whether doctor's first cause is a queue labQueue
// explains.
func (r *runner) firstIsLabQueue(first finding.ID) bool {
	return slices.ContainsFunc(r.res.Findings, func(f finding.Finding) bool { return f.ID == first && r.labQueue(f) })
}

// onlyLabQueue reports whether doctor's "problems" on a healthy lab rest on
// the lab's own shaper alone: every warning is a queue labQueue explains.
// BBR keeps that queue short, but not always in an emulated guest (kernel
// WireGuard under TCG: +36.5 ms through the tunnel, +15.8 ms beside it, in 1
// of the project CI's runs); the rate must still be healthy.
func (r *runner) onlyLabQueue(status string) bool {
	if status != doctor.StatusProblems {
		return false
	}
	queue := false
	for _, f := range r.res.Findings {
		switch {
		case r.labQueue(f):
			queue = true
		case f.Severity >= finding.Warning:
			return false
		}
	}
	return queue
}

// unexpectedName is how Result.Unexpected names a finding: "ID on host".
func unexpectedName(f finding.Finding) string { return string(f.ID) + " on " + f.Host.String() }

// Environment reports whether a finding describes the machine the lab runs
// on rather than the case (catalog.Environment): every lab node shares its
// CPUs, so a busy machine saturates them whatever the scenario does.
func Environment(id finding.ID) bool { return role(id) == catalog.Environment }

// symptom reports whether id describes slowness itself rather than a cause:
// throughput itself is judged by the ratio after the fix (healthy: the only
// measurement), not as a finding.
func symptom(id finding.ID) bool { return role(id) == catalog.Symptom }

func role(id finding.ID) catalog.Role {
	e, _ := catalog.Lookup(id)
	return e.Doctor.Role
}

// judge decides whether the scenario proved its case: doctor's verdict on
// the broken lab (verdictFaults), then what the fix's measurement shows.
func (r *runner) judge() {
	res := r.res
	why := r.verdictFaults()
	if res.StillFound {
		why = append(why, string(r.sc.Expect)+" still proven after the fix")
	}
	if r.sc.ECMP > 1 {
		if s := res.Scaling(); s < r.sc.MinScaling {
			why = append(why, fmt.Sprintf("ECMP scaling %.2fx < %.2fx", s, r.sc.MinScaling))
		}
		fair := 1 / float64(r.sc.ECMP)
		if len(res.TunnelShares) != r.sc.ECMP {
			why = append(why, fmt.Sprintf("traffic measured on %d of %d tunnels", len(res.TunnelShares), r.sc.ECMP))
		}
		for i, sh := range res.TunnelShares {
			if sh < minECMPShare*fair {
				why = append(why, fmt.Sprintf("tunnel %d carried %.0f%% of the bytes (fair share %.0f%%)", i, sh*100, fair*100))
			}
		}
	} else if r.sc.MinSpread > 0 {
		// The fix spreads flows; the tunnel, one flow, rides one link under
		// either hash, so its own ratio is no measure of it.
		why = append(why, spreadShort(res.Spread, r.sc.MinSpread)...)
	} else {
		min := r.passMark()
		ratio := res.After.Worst()
		if r.sc.UploadOnly {
			ratio = res.After.Up.Ratio()
		}
		if ratio < min {
			why = append(why, fmt.Sprintf("after-fix ratio %.2f < %.2f", ratio, min))
		}
		if r.sc.Steady {
			why = append(why, unsteadyAfter(res.BenchAfter)...)
		}
		if r.sc.Latency {
			why = append(why, stillDelayed(res.BenchAfter, r.sc.Expect)...)
		}
	}
	if r.sc.IdleProof > 0 && !strings.HasPrefix(res.IdleProof, idleAnswered) {
		why = append(why, "after the fix and an idle of "+strconv.Itoa(r.sc.IdleProof)+" s: "+orDefault(res.IdleProof, "not tried"))
	}
	res.Pass, res.Why = len(why) == 0, strings.Join(why, "; ")
}

// judgeVerdict decides a run that ends with doctor's verdict (VerdictOnly, or
// a fix that could not be applied here): verdictFaults alone.
func (r *runner) judgeVerdict() {
	why := r.verdictFaults()
	r.res.Pass, r.res.Why = len(why) == 0, strings.Join(why, "; ")
}

// verdictFaults says what is wrong with doctor's verdict on the broken lab:
// the expected finding not reported, one not expected, or doctor's answer
// (judgeDoctor, kept in DoctorMissed too).
func (r *runner) verdictFaults() []string {
	var why []string
	if !r.res.Found && r.sc.Expect != "" {
		why = append(why, string(r.sc.Expect)+" not reported")
	}
	if len(r.res.Unexpected) > 0 {
		why = append(why, "unexpected: "+strings.Join(r.res.Unexpected, ", "))
	}
	doc := r.judgeDoctor()
	r.res.DoctorMissed = strings.Join(doc, "; ")
	return append(why, doc...)
}

// judgeDoctor checks doctor's answer on the broken lab: the case's cause
// ranked first, and the targeted probes the case needs chosen; on the healthy
// lab, "healthy" and no probe at all.
func (r *runner) judgeDoctor() []string {
	d, sc := r.res.DoctorSays(), r.sc
	var why []string
	switch {
	case sc.Latent && d.Status == doctor.StatusHealthy:
		// A cost the bench did not show: healthy is right if doctor still names it.
		if !slices.Contains(d.Causes, sc.Expect) {
			why = append(why, fmt.Sprintf("doctor called the tunnel healthy without naming %s", sc.Expect))
		}
	case sc.Latent && d.Status == doctor.StatusProblems && r.firstIsLabQueue(d.First):
		// The rate held, and the first warning is the queue the lab's own
		// shaper holds (kernel WireGuard in the emulated guest: CUBIC fills
		// it), which costs no rate: the latent cost must still be named.
		if !slices.Contains(d.Causes, sc.Expect) {
			why = append(why, fmt.Sprintf("doctor ranked the lab's own queue first without naming %s", sc.Expect))
		}
	case sc.Latent && d.Status != doctor.StatusHealthy && slices.Contains(sc.Also, d.First):
		// The latent cost showed this time (kernel WireGuard's fragmenting
		// tunnel measured 0.63 once, 0.92 another time): the cause the probe
		// proved behind it may come first, as long as Expect is named.
		if !slices.Contains(d.Causes, sc.Expect) {
			why = append(why, fmt.Sprintf("doctor ranked %s first without naming %s", d.First, sc.Expect))
		}
	case sc.Expect != "" && symptom(sc.Expect):
		// A symptom the path itself causes (a cycle the underlay shares):
		// doctor ranks symptoms nowhere, and no cause on the hosts is right;
		// the queue the lab's own shaper holds may come first (the path's
		// slow phase at 20 Mbit/s: +68 ms through the tunnel and beside it).
		if d.First != "" && !r.firstIsLabQueue(d.First) {
			why = append(why, fmt.Sprintf("doctor ranked %s first, want no cause on the hosts (%s is the path's)", d.First, sc.Expect))
		}
	case sc.ECMP > 1 && sc.Expect != "":
		// ECMP is where more capacity is, not a fault: doctor must report
		// it (Found, judged with the fix's scaling), not rank it a cause.
	case sc.Expect != "" && d.First != sc.Expect:
		why = append(why, fmt.Sprintf("doctor ranked %s first, want %s", orDefault(d.First, "nothing"), sc.Expect))
	case sc.Expect == "" && sc.ECMP == 0 && d.Status != doctor.StatusHealthy && !r.onlyLabQueue(d.Status):
		why = append(why, fmt.Sprintf("doctor said %s on a healthy tunnel", d.Status))
	}
	for _, p := range sc.Probes {
		if targeted(p) && !slices.ContainsFunc(r.res.Probes, func(pr ProbeResult) bool { return pr.Probe == p }) {
			why = append(why, fmt.Sprintf("doctor did not run the %s probe", p))
		}
	}
	if sc.Expect == "" && sc.ECMP == 0 && len(r.res.Probes) > 0 {
		why = append(why, fmt.Sprintf("doctor ran %d targeted probes on a healthy tunnel", len(r.res.Probes)))
	}
	if len(sc.PathFix) > 0 {
		why = append(why, appliedToPath(r.res.Findings, sc.Expect)...)
	}
	return why
}

// appliedToPath names the fixes doctor proposes to apply for id, a cause on
// the path (Scenario.PathFix): nothing changed on the hosts cures it (a cap
// on the tunnel would only slow a cycling path's good phase), so doctor must
// propose none.
func appliedToPath(fs []finding.Finding, id finding.ID) []string {
	var why []string
	for _, f := range fs {
		for _, fix := range f.Fixes {
			if f.ID == id && fix.Action != nil {
				why = append(why, fmt.Sprintf("doctor proposes to apply %q on %s for a cause on the path", fix.Description, f.Host))
			}
		}
	}
	return why
}

// unsteadyAfter says why the after-fix upload is not steady ("" when it is):
// a collapse, or per-second rates that vary more than shaping.StableCV.
func unsteadyAfter(b *bench.Report) []string {
	if b == nil {
		return []string{"no after-fix bench to judge steadiness by"}
	}
	for _, run := range b.Runs {
		if run.Path != bench.PathTunnel || run.Direction != bench.Upload || run.Streams != 1 || run.Result == nil {
			continue
		}
		if run.Stats.Collapses > 0 || run.Stats.CV > shaping.StableCV {
			return []string{fmt.Sprintf("after the fix the upload still swings: %d collapses, per-second rates vary %.0f%% (steady: %.0f%%)",
				run.Stats.Collapses, 100*run.Stats.CV, 100*shaping.StableCV)}
		}
		return nil
	}
	return []string{"no after-fix upload through the tunnel to judge steadiness by"}
}

// passMark is the after-fix ratio the scenario must reach.
func (r *runner) passMark() float64 {
	if r.sc.MinRatio > 0 {
		return r.sc.MinRatio
	}
	return 0.9
}

// stillDelayed says why the after-fix bench still shows the latency
// finding id (its title: how much a transfer adds), or nothing.
func stillDelayed(b *bench.Report, id finding.ID) []string {
	if b == nil {
		return []string{"no after-fix bench to judge the round trip under load by"}
	}
	if b.IdleLatency == nil || b.IdleLatency.Tunnel == nil {
		return []string{"the after-fix bench measured no round trip"}
	}
	for _, f := range b.Findings {
		if f.ID == id {
			return []string{"after the fix: " + f.Title}
		}
	}
	return nil
}

// spreadShort says where a fix measured by parallel flows around the tunnel
// (Scenario.MinSpread) fell short: not measured, rolled back, or less gain
// than min.
func spreadShort(v *fix.Verification, min float64) []string {
	switch {
	case v == nil:
		return []string{"the fix was not measured with parallel flows around the tunnel"}
	case !v.Kept:
		return []string{fmt.Sprintf("%s: %s before, %s after: rolled back", v.Before.Name, v.Before, v.After)}
	case v.After.Value < min*v.Before.Value:
		return []string{fmt.Sprintf("%s: %s before, %s after (%.2fx < %.2fx)", v.Before.Name, v.Before, v.After, v.After.Value/v.Before.Value, min)}
	}
	return nil
}
