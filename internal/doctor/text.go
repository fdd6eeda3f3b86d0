package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/shell"
)

// WriteText renders the report for a person: the status and the measured
// figures, one verdict (cause, evidence chain, expected gain, the command),
// then the other causes briefly, the probes, what could not be judged and
// what --fix did.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	pair := r.Client.String()
	if !r.Server.IsZero() {
		pair += " → " + r.Server.String()
	}
	p("wgperf doctor: %s", pair)
	p("")
	switch {
	case r.Unreachable != nil:
		p("%s", r.Unreachable.line(r.Client.String(), r.Server.String()))
	case r.Status == StatusHealthy:
		p("HEALTHY: the tunnel carries %s of the underlay (%s).", ratios(r.Measured), r.Threshold)
	case r.Status == StatusSlow:
		p("SLOW: %s (%s).", slowLine(r.Measured), r.Threshold)
	case r.Status == StatusProblems:
		p("THROUGHPUT OK NOW (%s of the underlay), but with problems that cost it under other conditions.", ratios(r.Measured))
	default:
		if !r.Server.IsZero() {
			p("NOT JUDGED: the tunnel could not be measured against its underlay (reasons below).")
		} else {
			p("NOT JUDGED: no server given, so the tunnel was not measured against its underlay.")
		}
	}
	if m := r.Measured; m.Benched && (m.Up.Underlay > 0 || m.Down.Underlay > 0) {
		p("  upload   tunnel %6.1f  underlay %6.1f Mbit/s", m.Up.Tunnel, m.Up.Underlay)
		p("  download tunnel %6.1f  underlay %6.1f Mbit/s", m.Down.Tunnel, m.Down.Underlay)
	}
	for _, l := range r.hopLines() {
		p("  %s", l)
	}
	if len(r.Uplinks) > 1 {
		p("  each uplink to the endpoint (the tunnel with its endpoint routed through it, raw TCP, round trip; hops):")
		for _, l := range uplinks.Lines(r.Uplinks) {
			p("    %s", l)
		}
	}
	if m := r.Measured; m.UnderlayBlocked != "" {
		p("  upload   tunnel %6.1f Mbit/s, download %.1f: underlay baseline blocked (%s)", m.Up.Tunnel, m.Down.Tunnel, m.UnderlayBlocked)
	}
	if h := r.Hub; h != nil {
		p("  path: %s", h.line())
		if m := r.Measured; !h.Measured && m.Benched && (m.Up.Tunnel > 0 || m.Down.Tunnel > 0) {
			p("  upload   tunnel %6.1f Mbit/s, download %.1f through the hub: its legs' underlays not measured (--via)", m.Up.Tunnel, m.Down.Tunnel)
		}
	}
	if u := r.Unreachable; u != nil {
		for _, f := range u.Facts {
			p("  %s", f)
		}
	} else if r.BenchError != "" {
		p("  bench stopped: %s", r.BenchError)
	}
	if r.Bench != nil {
		for _, s := range r.Bench.KernelDrops {
			p("  %s", shell.Comment(s.Line()))
		}
	}
	if v := r.Verdict(); v != nil {
		f := v.Finding
		p("")
		p("VERDICT: %s", f.Title)
		p("  cause:    %s (%s) on %s", f.ID, f.Severity, f.Host)
		if f.Detail != "" {
			p("  why:      %s", f.Detail)
		}
		p("  evidence:")
		for i, e := range f.Evidence {
			if i == finding.TextEvidence {
				p("    - … and %d more (--json lists every one)", len(f.Evidence)-i)
				break
			}
			p("    - %s", e)
		}
		if m := r.Measured; m.Benched && r.Unreachable == nil {
			p("    - bench: %s", measuredLine(m))
		}
		p("  expected gain: %s", v.Gain)
		if v.Command != "" {
			if v.RuntimeOnly != "" {
				p("  fix:      %s (runtime only)", v.Command)
				p("            %s", shell.Comment(v.RuntimeOnly))
			} else {
				p("  fix:      %s", v.Command)
			}
			if strings.Contains(v.Command, "--from doctor.json") {
				p("            (an active probe proved it: save this report first with --json > doctor.json)")
			}
		} else if len(f.Fixes) > 0 {
			p("  fix by hand: %s", f.Fixes[0].Description)
			for _, c := range f.Fixes[0].Commands {
				p("    %s", c)
			}
		}
	} else if r.Status == StatusSlow {
		p("")
		for _, l := range r.notFoundLines() {
			p("%s", l)
		}
	} else if r.Status != StatusHealthy && r.Status != StatusUnjudged {
		p("")
		p("No cause found among the checks and probes: see the symptoms below.")
	}
	var rest []Cause
	if len(r.Causes) > 1 || (len(r.Causes) == 1 && r.Verdict() == nil) {
		rest = r.Causes
		if r.Verdict() != nil {
			rest = r.Causes[1:]
		}
	}
	if len(rest) > 0 {
		p("")
		if r.Status == StatusHealthy {
			p("Latent (not costing throughput now):")
		} else {
			p("Also:")
		}
		for _, c := range rest {
			p("  %-8s %-26s %s: %s", c.Finding.Severity, c.Finding.ID, c.Finding.Host, c.Finding.Title)
			if c.CannotExplain != "" && r.Verdict() != nil {
				p("  %-8s %-26s (%s)", "", "", c.CannotExplain)
			}
		}
	}
	if len(r.otherPeers) > 0 {
		p("")
		p("Other peers of these ends (not this tunnel's cause: it carried traffic):")
		for _, f := range r.otherPeers {
			p("  %-8s %-26s %s: %s", f.Severity, f.ID, f.Host, f.Title)
		}
	}
	var symptoms []finding.Finding
	for _, f := range r.Findings {
		if Symptom(f.ID) {
			symptoms = append(symptoms, f)
		}
	}
	if len(symptoms) > 0 {
		p("")
		p("Symptoms measured:")
		for _, f := range symptoms {
			p("  %-8s %-26s %s", f.Severity, f.ID, f.Title)
		}
	}
	p("")
	if len(r.Probes) == 0 {
		p("Targeted probes: none needed.")
	} else {
		p("Targeted probes:")
		for _, pr := range r.Probes {
			res := pr.Summary
			if pr.Error != "" {
				res = "failed: " + pr.Error
			}
			p("  %s (%.0f s): %s", pr.Probe, pr.Seconds, res)
			p("    because %s", pr.Why)
		}
	}
	if len(r.NotJudged) > 0 {
		p("")
		p("Not judged:")
		for _, n := range r.NotJudged {
			p("  - %s", n)
		}
	}
	if f := r.Fix; f != nil {
		p("")
		p("Fix (--fix): %s on %s", f.ID, f.Host)
		for _, st := range f.Steps {
			state := "applied"
			switch {
			case st.Error != "":
				state = "failed: " + st.Error
			case !st.Applied:
				state = "not applied"
			case !st.Kept:
				state = "rolled back"
			}
			p("  %s: %s: %s", st.Host, finding.JoinIDs(st.IDs, ", "), state)
			if j := st.Journal; j != nil && j.Verify != nil {
				p("    verify: before %s; after %s", j.Verify.Before.Detail, j.Verify.After.Detail)
			}
			if st.Note != "" {
				p("    %s", st.Note)
			}
		}
		if f.After != nil {
			p("  before: %s", measuredLine(f.Before))
			p("  after:  %s", measuredLine(*f.After))
		}
		if f.Confirm {
			var undo []string
			for _, st := range f.Steps {
				undo = append(undo, "wgperf fix rollback --host "+st.Host.String())
			}
			p("  confirmed: a measurement through the tunnel succeeded after each change (undo: %s)", strings.Join(undo, "; "))
		}
		if f.Note != "" {
			p("  %s", f.Note)
		}
	}
	p("")
	p("Took %.0f s.", r.Seconds)
	_, err := io.WriteString(w, b.String())
	return err
}

func ratios(m Measured) string {
	return fmt.Sprintf("%.0f%% up, %.0f%% down", m.Up.Ratio()*100, m.Down.Ratio()*100)
}

func measuredLine(m Measured) string {
	s := "upload " + m.Up.Figures() + ", download " + m.Down.Figures() + " tunnel/underlay"
	if m.Stalled {
		s += "; a tunnel run stalled"
	}
	if len(m.UnderlayFailed) > 0 {
		s += "; " + underlayLine(m)
	}
	return s
}

func slowLine(m Measured) string {
	var parts []string
	if m.Stalled {
		parts = append(parts, "a bulk transfer through the tunnel stalled")
	}
	if len(m.UnderlayFailed) > 0 {
		parts = append(parts, underlayLine(m)+", so the path itself drops what the tunnel sends")
	}
	for _, d := range []struct {
		n string
		r bench.DirRate
	}{{"upload", m.Up}, {"download", m.Down}} {
		if d.r.Underlay > 0 && d.r.Ratio() < m.Expected && !m.underlayFailed(d.n) {
			parts = append(parts, fmt.Sprintf("%s tunnel %.0f%% of the underlay", d.n, d.r.Ratio()*100))
		}
	}
	if len(parts) == 0 {
		return "the tunnel keeps up with the underlay it was measured against, but a critical cause slows both"
	}
	return strings.Join(parts, "; ")
}
