package bench

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// LongSeconds is the length of a run that shows collapse cycles: the
// remote-users case's tunnel swung between 180 and 90 Mbit/s every 15-20 s,
// which a 3-second run cannot see.
const LongSeconds = 30

// cycleRecovery: a collapsed run has recovered once a second carries this
// share of its high level again (lower than collapses' 0.85: a knee's peaks
// last a second or two, and averaged over a second they fall short of it).
const cycleRecovery = 0.75

// Cycles describe a long run's collapses: the level it climbs to and falls
// to, how deep and how often.
type Cycles struct {
	Seconds  int     `json:"seconds"`   // measured one-second intervals
	HighMbit float64 `json:"high_mbit"` // 90th percentile of the per-second rate
	LowMbit  float64 `json:"low_mbit"`  // 10th percentile
	MeanMbit float64 `json:"mean_mbit"`
	// Depth is how far it falls: 1 - low/high.
	Depth float64 `json:"depth"`
	// Collapses counts falls below CollapseFraction of the high level, each
	// after a recovery to cycleRecovery of it.
	Collapses int `json:"collapses"`
	// PeriodSeconds is the mean time between collapse starts (0 with fewer
	// than two).
	PeriodSeconds float64 `json:"period_seconds"`
	CV            float64 `json:"cv"`
}

// CyclesOf reads the collapse cycles of a run's measured seconds. It is pure.
func CyclesOf(res *iperf.Result) Cycles {
	var c Cycles
	if res == nil {
		return c
	}
	var rates []float64
	for _, iv := range res.Measured() {
		if iv.End-iv.Start >= 0.5 {
			rates = append(rates, iv.Mbit)
		}
	}
	c.Seconds = len(rates)
	if len(rates) < 3 {
		return c
	}
	sorted := append([]float64(nil), rates...)
	sort.Float64s(sorted)
	c.HighMbit = sorted[int(math.Ceil(0.9*float64(len(sorted))))-1]
	c.LowMbit = sorted[int(math.Floor(0.1*float64(len(sorted))))]
	var sum float64
	for _, x := range rates {
		sum += x
	}
	c.MeanMbit = sum / float64(len(rates))
	if c.HighMbit > 0 {
		c.Depth = 1 - c.LowMbit/c.HighMbit
	}
	c.CV = cv(rates)
	var starts []int
	down := false
	for i, x := range rates {
		switch {
		case x < CollapseFraction*c.HighMbit && !down:
			starts, down = append(starts, i), true
		case x >= cycleRecovery*c.HighMbit:
			down = false
		}
	}
	c.Collapses = len(starts)
	if len(starts) >= 2 {
		c.PeriodSeconds = float64(starts[len(starts)-1]-starts[0]) / float64(len(starts)-1)
	}
	return c
}

// Oscillating reports collapse cycles: at least two collapses and a spread
// of the per-second rate an unsteady link shows.
func (c Cycles) Oscillating() bool { return c.Collapses >= 2 && c.CV >= OscillationCV }

// kneeFractions are the shares of a collapsing run's high level the sweep
// caps at: the lab's knee (wireguard-go on one CPU) still collapsed at 90%
// and held at 80%; the remote users' 150 Mbit/s cap was 83% of its 180.
var kneeFractions = []float64{0.9, 0.8, 0.7}

// MinCapMbit is the lowest cap a sweep tries: tc's tbf holds a few Mbit/s
// as well as a few hundred, and a remote user's uplink may be 5 Mbit/s.
const MinCapMbit = 2

// CapsBelow are the caps a sweep tries below a run's high level (Mbit/s),
// fastest first: whole Mbit/s, each below the level, none twice and none
// below MinCapMbit. It is pure.
func CapsBelow(highMbit float64) []int {
	var out []int
	for _, f := range kneeFractions {
		c := int(math.Round(highMbit * f))
		if c >= MinCapMbit && float64(c) < highMbit && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// CycleFinding is throughput.oscillation from a long run in dir, sent by
// sender through its WireGuard interface iface ("" when unknown); nil when
// the run holds steady. Its fix is the sweep that finds whether a cap helps
// (SweepFix), never a cap of its own: a cap no sweep held can only slow the
// tunnel (throughput.collapse-knee carries the one a sweep proved). It is
// pure.
func CycleFinding(client, server, dir string, sender target.Spec, iface string, c Cycles) *finding.Finding {
	if !c.Oscillating() {
		return nil
	}
	f := &finding.Finding{
		ID: catalog.ThroughputOscillation, Severity: finding.Warning, Host: sender, Interface: iface,
		Title: fmt.Sprintf("Tunnel %s collapses every %.0f s over %d s: from %.0f to %.0f Mbit/s (%.0f%% deep), %d collapses",
			dir, c.PeriodSeconds, c.Seconds, c.HighMbit, c.LowMbit, 100*c.Depth, c.Collapses),
		Detail: "The rate climbs until something saturates (a CPU, a queue, a receiver), collapses and recovers, again and again: " +
			"a short run sees one phase or the other. A rate cap just below the knee may hold it steady: only a sweep that holds caps for " +
			"several cycles shows whether one does, and what it costs (wgperf shape-sweep; doctor runs it when the cycles are the tunnel's own).",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("collapses in %d s", c.Seconds), Value: fmt.Sprint(c.Collapses), Threshold: "< 2"}.Of(float64(c.Collapses), finding.Count),
			finding.Evidence{Source: "iperf3", Key: "period between collapses", Value: fmt.Sprintf("%.1f s", c.PeriodSeconds)}.Of(c.PeriodSeconds, finding.Seconds),
			finding.Evidence{Source: "iperf3", Key: "depth (1 - 10th/90th percentile of the per-second rate)", Value: fmt.Sprintf("%.0f%% (%.0f → %.0f Mbit/s)", 100*c.Depth, c.HighMbit, c.LowMbit)}.Of(c.Depth, finding.Ratio),
			finding.Evidence{Source: "iperf3", Key: "coefficient of variation of per-second rate", Value: fmt.Sprintf("%.2f", c.CV), Threshold: fmt.Sprintf("< %.2f", OscillationCV)}.Of(c.CV, finding.Ratio),
		},
		Fixes: []finding.Fix{SweepFix(client, server, dir, iface, c.HighMbit)},
	}
	return f
}

// SweepFix is the shape-sweep run that tests caps below a collapsing run's
// high level (CapsBelow) on the sender of dir: the client for an upload,
// the server (its interface iface) for a download.
func SweepFix(client, server, dir, iface string, highMbit float64) finding.Fix {
	args := []string{"shape-sweep", "--client", client, "--server", server}
	if dir == Download {
		args = []string{"shape-sweep", "--client", server, "--server", client}
		if iface != "" {
			args = append(args, "--interface", iface)
		}
	}
	if caps := CapsBelow(highMbit); len(caps) > 0 {
		var words []string
		for _, c := range caps {
			words = append(words, fmt.Sprint(c))
		}
		args = append(args, "--caps", strings.Join(words, ","))
	}
	return finding.Fix{
		Description: "Hold caps below the knee for several cycles each and see whether one keeps the tunnel steady, and at what cost",
		Commands:    []string{shell.Join("wgperf", args...)},
	}
}

// ManyFlowsGain is how many times one stream's rate parallel streams through
// the same tunnel must carry before the path counts as having had room that
// one flow left unused. A knee or a full link caps the streams' sum near one
// stream's peaks; a window that halves at every loss does not. Recorded: a
// CUBIC stream on a 2%-loss WAN, 4 streams 4.9× one; a CUBIC stream through
// a knee (the lab's collapse cycles), 1.7×.
const ManyFlowsGain = 2.5

// ParallelGain is the parallel run's rate over the single stream's mean (c):
// well above 1, one flow cannot fill the tunnel; well below, many flows do
// worse than one. 0 when either run is missing.
func ParallelGain(c Cycles, parallel *Run) float64 {
	if parallel == nil || parallel.Result == nil || c.MeanMbit <= 0 {
		return 0
	}
	return parallel.Stats.Mbit / c.MeanMbit
}

// LossLimited is tcp.congestion-control proven by a long run: one stream from
// a CUBIC or Reno sender retransmitted while parallel streams carried
// ManyFlowsGain times its rate. The window, not the path, was the limit, and
// the run's collapses (c) are the algorithm's answer to random loss, not a
// knee that a rate cap would hold below. nil when the runs do not show it.
// It is pure.
func LossLimited(sender target.Spec, single Run, c Cycles, parallel *Run) *finding.Finding {
	res := single.Result
	gain := ParallelGain(c, parallel)
	if res == nil || res.Protocol != "tcp" || !lossBased(res.Congestion) || single.Stats.Retransmits == 0 || gain < ManyFlowsGain {
		return nil
	}
	cc := strings.ToUpper(res.Congestion)
	title := fmt.Sprintf("%s on the sender: one stream carries %s over %d s while %s carry %s (%.1f×): its window, not the path, is the limit",
		cc, mbit(c.MeanMbit), c.Seconds, streamsWord(parallel.Streams), mbit(parallel.Stats.Mbit), gain)
	ev := []finding.Evidence{
		{Source: "iperf3", Key: "sender_tcp_congestion", Value: res.Congestion, Threshold: "bbr"},
		finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("%s / 1 stream", streamsWord(parallel.Streams)), Value: fmt.Sprintf("%.1f", gain),
			Threshold: fmt.Sprintf("< %.1f", ManyFlowsGain)}.Of(gain, finding.Ratio),
		finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("retransmits of the stream in %d s", c.Seconds), Value: Commas(single.Stats.Retransmits), Threshold: "0"}.Of(float64(single.Stats.Retransmits), finding.Packets),
	}
	if single.Stats.CwndMin > 0 {
		ev = append(ev, finding.Evidence{Source: "iperf3", Key: "cwnd max/min", Value: fmt.Sprintf("%.1f (%s..%s bytes)", single.Stats.CwndSwing,
			Commas(single.Stats.CwndMin), Commas(single.Stats.CwndMax))}.Of(single.Stats.CwndSwing, finding.Ratio))
	}
	if c.Collapses >= 2 {
		ev = append(ev, finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("collapses in %d s", c.Seconds),
			Value: fmt.Sprintf("%d, every %.0f s (%.0f → %.0f Mbit/s)", c.Collapses, c.PeriodSeconds, c.HighMbit, c.LowMbit)}.Of(float64(c.Collapses), finding.Count))
	}
	return &finding.Finding{
		ID: catalog.TCPCongestionControl, Severity: finding.Warning, Host: sender,
		Title: title,
		Detail: "A loss-based algorithm halves its window at every lost packet and climbs back slowly, so on a path that loses " +
			"packets at random one flow saws up and down far below what the path carries, while several flows together fill it. " +
			"A rate cap would not steady it; BBR paces by measured bandwidth and keeps the rate through random loss.",
		Evidence: ev,
		Fixes:    bbrFixes(),
	}
}

// lossBased reports a congestion control that backs off at every loss.
func lossBased(cc string) bool { return cc == "cubic" || cc == "reno" }

// bbrFixes switch a sender to BBR. Its kernel and modules are unknown here:
// the fix shows the modprobe, and the fq qdisc for kernels before 4.20.
func bbrFixes() []finding.Fix {
	bbr, err := remedy.Congestion("bbr", true, "")
	return remedy.Fixes("Switch the sender to BBR", bbr, err)
}
