package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The HTML report of a doctor run lists the verdict first, then the other
// causes and the symptoms, with the bench runs before and after a fix.
func TestDoctorDocument(t *testing.T) {
	res := &iperf.Result{Protocol: "tcp", SentMbit: 100, ReceivedMbit: 100, Intervals: []iperf.Interval{{Start: 0, End: 1, Mbit: 100}}}
	b := &bench.Report{Runs: []bench.Run{{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: 1}, Result: res}}}
	rep := &Report{Client: targettest.Spec("ssh:a"), Server: targettest.Spec("ssh:b"), Status: StatusSlow, Bench: b,
		Causes: []Cause{
			{Finding: finding.Finding{ID: "route.stale-endpoint", Severity: finding.Critical, Host: targettest.Spec("ssh:a"), Title: "stale"}},
			{Finding: finding.Finding{ID: "cpu.saturated", Severity: finding.Warning, Host: targettest.Spec("ssh:b"), Title: "cpu"}},
		},
		Findings: []finding.Finding{
			{ID: "cpu.saturated", Severity: finding.Warning, Host: targettest.Spec("ssh:b")},
			{ID: "route.stale-endpoint", Severity: finding.Critical, Host: targettest.Spec("ssh:a")},
			{ID: "throughput.tunnel-ratio", Severity: finding.Warning, Host: targettest.Spec("ssh:a")},
		},
		Fix: &FixOutcome{AfterBench: b},
	}
	doc := rep.Document()
	var got []string
	for _, f := range doc.Findings {
		got = append(got, string(f.ID))
	}
	if strings.Join(got, " ") != "route.stale-endpoint cpu.saturated throughput.tunnel-ratio" {
		t.Errorf("findings %v: want the causes in rank order, then the symptoms", got)
	}
	if !strings.Contains(doc.Title, "slow — route.stale-endpoint") || len(doc.Runs) != 2 ||
		doc.Runs[0].Label != report.LabelBefore || doc.Runs[1].Label != report.LabelAfter {
		t.Errorf("title %q, runs %+v", doc.Title, doc.Runs)
	}
	var html bytes.Buffer
	if err := report.WriteHTML(&html, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "route.stale-endpoint") {
		t.Errorf("HTML without the verdict")
	}
}
