//go:build !router

package report

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/scenario"
)

// fromLabRunJSON reads "wgperf lab run --json".
func fromLabRunJSON(data []byte) (Document, error) {
	var run struct {
		Scenarios []*scenario.Result `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		return Document{}, document.JSONError("lab run results", err)
	}
	if len(run.Scenarios) == 0 {
		return Document{}, errors.New("lab run results: no scenarios")
	}
	return FromScenarios(run.Scenarios), nil
}

// FromScenarios is the report of "wgperf lab run": a before/after overview and
// per scenario its symptom, the finding with its evidence, the fix commands,
// the per-second runs before and after the fix, and the MTU search if it ran
// one. Nil results are skipped.
func FromScenarios(results []*scenario.Result) Document {
	doc := Document{Title: "wgperf lab run", Findings: []finding.Finding{}}
	for _, r := range results {
		if r == nil {
			continue
		}
		s := ScenarioResult{
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
		for _, p := range r.Recheck {
			s.Probes = append(s.Probes, fmt.Sprintf("%s after the fix: %s", p.Probe, p.Summary))
		}
		s.Runs = append(BenchRuns(r.BenchBefore, LabelBefore), BenchRuns(r.BenchAfter, LabelAfter)...)
		doc.Scenarios = append(doc.Scenarios, s)
	}
	if n := len(doc.Scenarios); n == 1 {
		doc.Title += ": " + doc.Scenarios[0].Name
	} else {
		doc.Title += fmt.Sprintf(": %d scenarios", n)
	}
	return doc
}
