package scenario

import (
	"errors"
	"fmt"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/report"
)

// ReadReport is the report of "wgperf lab run --json" (report --from).
func ReadReport(d *document.Doc) (report.Document, error) {
	var run struct {
		Scenarios []*Result `json:"scenarios"`
	}
	if err := d.Decode(&run, "lab run results"); err != nil {
		return report.Document{}, err
	}
	if len(run.Scenarios) == 0 {
		return report.Document{}, errors.New("lab run results: no scenarios")
	}
	return Report(run.Scenarios), nil
}

// Report is the report of "wgperf lab run": a before/after overview and per
// scenario its symptom, the finding with its evidence, the fix commands, the
// per-second runs before and after the fix, and the MTU search if it ran
// one. Nil results are skipped.
func Report(results []*Result) report.Document {
	doc := report.Document{Title: "wgperf lab run", Findings: []finding.Finding{}}
	for _, r := range results {
		if r == nil {
			continue
		}
		s := report.ScenarioResult{
			Name: r.Scenario, Case: r.Case, Symptom: r.Symptom, Finding: r.Expect, Found: r.Found,
			Unexpected: r.Unexpected, Fix: r.Fix,
			Before:  r.Before.Up,
			After:   r.After.Up,
			MTU:     r.MTU,
			Seconds: r.Seconds, Pass: r.Pass, Why: r.Why,
		}
		for _, f := range r.Findings {
			if f.ID == r.Expect {
				s.Evidence = append(s.Evidence, f)
			}
		}
		for _, p := range r.Probes {
			s.Probes = append(s.Probes, fmt.Sprintf("%s: %s", p.Probe, p.Summary))
		}
		for _, l := range uplinks.Lines(r.Uplinks) {
			s.Probes = append(s.Probes, "uplink "+l)
		}
		for _, p := range r.Recheck {
			s.Probes = append(s.Probes, fmt.Sprintf("%s after the fix: %s", p.Probe, p.Summary))
		}
		s.Runs = append(report.BenchRuns(r.BenchBefore, report.LabelBefore), report.BenchRuns(r.BenchAfter, report.LabelAfter)...)
		doc.Scenarios = append(doc.Scenarios, s)
	}
	if n := len(doc.Scenarios); n == 1 {
		doc.Title += ": " + doc.Scenarios[0].Name
	} else {
		doc.Title += fmt.Sprintf(": %d scenarios", n)
	}
	return doc
}
