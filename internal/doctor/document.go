package doctor

import (
	"fmt"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/report"
)

// Document is the HTML report of a doctor run: the ranked causes first,
// then the symptoms, the bench (before and after a fix) and the MTU search.
func (r *Report) Document() report.Document {
	title := fmt.Sprintf("wgperf doctor: %s", r.Client)
	hosts := r.Hosts
	if !r.Server.IsZero() {
		title += " → " + r.Server.String()
	}
	title += ": " + r.Status
	if v := r.Verdict(); v != nil {
		title += " — " + string(v.Finding.ID)
	}
	fs := []finding.Finding{}
	for _, c := range r.Causes {
		fs = append(fs, c.Finding)
	}
	for _, f := range r.Findings {
		if Symptom(f.ID) {
			fs = append(fs, f)
		}
	}
	doc := report.Document{Title: title, Generated: time.Now(), Hosts: hosts, Findings: fs, Skipped: r.Skipped, MTU: ProbeResult[*mtu.Result](r, mtu.Def)}
	if r.Fix != nil && r.Fix.AfterBench != nil {
		doc.Runs = append(report.BenchRuns(r.Bench, report.LabelBefore), report.BenchRuns(r.Fix.AfterBench, report.LabelAfter)...)
	} else {
		doc.Runs = report.BenchRuns(r.Bench, "")
	}
	return doc
}
