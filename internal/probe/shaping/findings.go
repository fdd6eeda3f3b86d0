package shaping

import (
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Raises are the findings this package builds: the cap sweep's analysis. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.ThroughputCollapseKnee}

// Findings is throughput.collapse-knee with a tbf cap when the sweep
// recommended one (Recommend): the knee is the cause, the cap its fix, the
// sweep's own figures its evidence, one line per cap held. A steady cap
// slower than the uncapped mean is named a trade-off. It is pure.
func Findings(r *Result) []finding.Finding {
	if r.Recommended == 0 || len(r.Steps) == 0 {
		return nil
	}
	un, capped := r.steps()
	title := fmt.Sprintf("Capped at %d Mbit/s the tunnel is steadier and faster: %.1f Mbit/s, its slowest second %.1f, against a mean of %.1f uncapped%s",
		r.Recommended, capped.Stats.Mbit, capped.MinMbit, un.Stats.Mbit, collapsesPhrase(un))
	detail := "Uncapped, the sender overruns something on the path (a CPU, a queue) and the rate collapses and recovers; a token bucket " +
		"just below the knee keeps it steady and moves more on average than the collapsing tunnel did."
	if tradeOff(r) {
		title = fmt.Sprintf("Capped at %d Mbit/s the tunnel holds a steady %.1f Mbit/s (slowest second %.1f) against a mean of %.1f uncapped%s: "+
			"steady for %.0f%% of the mean, a trade-off", r.Recommended, capped.Stats.Mbit, capped.MinMbit, un.Stats.Mbit, collapsesPhrase(un),
			100*capped.Stats.Mbit/un.Stats.Mbit)
		detail = "Uncapped, the tunnel carries more on average but collapses and recovers; capped just below the knee it carries a little " +
			"less, steadily, with no stalls: what streaming and interactive use need (the remote users' case chose 142 Mbit/s steady over " +
			"165 on average). For bulk transfers the mean matters more: wgperf shape-sweep --prefer mean recommends no cap then."
	}
	ev := []finding.Evidence{
		finding.Evidence{Source: "iperf3", Key: stepKey(un), Value: stepValue(un), Threshold: fmt.Sprintf("no collapse, cv <= %.2f", StableCV)}.Of(un.Stats.CV, finding.Ratio),
	}
	for _, s := range r.Steps {
		if s.CapMbit > 0 {
			ev = append(ev, finding.Evidence{Source: "iperf3", Key: stepKey(s), Value: stepValue(s)}.Of(s.Stats.Mbit, finding.Mbits))
		}
	}
	tbf, err := remedy.TBF(r.Device, strconv.Itoa(r.Recommended)+"mbit")
	return []finding.Finding{{
		ID: catalog.ThroughputCollapseKnee, Severity: finding.Warning, Host: r.Client, Interface: r.Device,
		Title: title, Detail: detail, Evidence: ev,
		Fixes: remedy.Fixes(fmt.Sprintf("Cap %s at %d Mbit/s", r.Device, r.Recommended), tbf, err),
	}}
}

// collapsesPhrase describes an uncapped run's collapses: ", which collapses
// 3 times, every 20 s, to 90 Mbit/s".
func collapsesPhrase(s Step) string {
	switch {
	case s.Stats.Collapses == 0:
		return ""
	case s.PeriodSeconds > 0:
		return fmt.Sprintf(" with collapses every %.0f s (to %.1f)", s.PeriodSeconds, s.MinMbit)
	}
	return fmt.Sprintf(" with %d collapses (to %.1f)", s.Stats.Collapses, s.MinMbit)
}

// stepKey names a step's evidence line.
func stepKey(s Step) string {
	label := "uncapped"
	if s.CapMbit > 0 {
		label = fmt.Sprintf("cap %d Mbit/s", s.CapMbit)
	}
	return fmt.Sprintf("%s for %d s: mean, slowest second, retransmits, collapses", label, s.Seconds)
}

// stepValue is a step's figures as its evidence line shows them.
func stepValue(s Step) string {
	v := fmt.Sprintf("%.1f, %.1f, %d, %d", s.Stats.Mbit, s.MinMbit, s.Stats.Retransmits, s.Stats.Collapses)
	if s.PeriodSeconds > 0 {
		v += fmt.Sprintf(" (every %.0f s)", s.PeriodSeconds)
	}
	if stable(s) {
		v += ", steady"
	}
	return v
}
