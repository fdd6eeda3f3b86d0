// Package report renders wgperf results as one self-contained HTML file: the
// findings with their evidence and fixes, bench matrices and charts, path-MTU
// searches and lab run scenarios. Text and JSON renderers sit next to their
// result types (diagnose, bench, mtu, ...).
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/shell"
)

// Document is everything one HTML report shows. "bench", "mtu", "diagnose"
// and "lab run" each fill the parts they have (see FromBench, FromMTU,
// FromDiagnosis, scenario.Report); empty parts are left out.
type Document struct {
	Title     string            `json:"title,omitempty"`
	Generated time.Time         `json:"generated,omitempty"`
	Hosts     []diagnose.Host   `json:"hosts,omitempty"`
	Findings  []finding.Finding `json:"findings"`
	Skipped   []check.Skip      `json:"skipped,omitempty"`
	// Unreachable are inventory hosts "diagnose --inventory" could not collect.
	Unreachable []fleet.Unreachable `json:"unreachable,omitempty"`
	// Runs are iperf3 tests through the tunnel and over the underlay, in both
	// directions; they make the bench matrix and the per-second charts.
	Runs []BenchRun `json:"runs,omitempty"`
	// Clients is bench --clients' load: several clients at once.
	Clients   *bench.ManyClients `json:"clients,omitempty"`
	MTU       *mtu.Result        `json:"mtu,omitempty"`
	Scenarios []ScenarioResult   `json:"scenarios,omitempty"`
	// ICMPBurst is an icmp-burst experiment, Sweep a shape-sweep.
	ICMPBurst *icmpburst.Result `json:"icmp_burst,omitempty"`
	Sweep     *shaping.Result   `json:"shape_sweep,omitempty"`
	// Fix is what "fix --apply --verify" changed and measured; its bench
	// runs before and after are Runs, its path MTU probe MTU.
	Fix *fix.Journal `json:"fix,omitempty"`
}

// Paths and directions of a bench run, and the labels of a scenario's runs.
const (
	PathTunnel   = "tunnel"
	PathUnderlay = "underlay"
	Upload       = "upload"   // from the first host to the second
	Download     = "download" // the reverse
	LabelBefore  = "before fix"
	LabelAfter   = "after fix"
)

// BenchRun is one iperf3 test in the bench matrix.
type BenchRun struct {
	Path      string  `json:"path"`      // PathTunnel or PathUnderlay
	Direction string  `json:"direction"` // Upload or Download
	Streams   int     `json:"streams,omitempty"`
	UDPMbit   float64 `json:"udp_mbit,omitempty"` // a UDP run at this offered rate; 0 for TCP
	// Label tells runs of the same kind apart, e.g. LabelBefore.
	Label  string        `json:"label,omitempty"`
	Result *iperf.Result `json:"result"`
}

// Kind says what sort of test the run was: "1 stream", "4 streams" or
// "UDP 20 Mbit/s". Runs of one kind share a chart.
func (r BenchRun) Kind() string {
	switch {
	case r.UDPMbit > 0:
		return fmt.Sprintf("UDP %g Mbit/s", r.UDPMbit)
	case r.Streams > 1:
		return fmt.Sprintf("%d streams", r.Streams)
	}
	return "1 stream"
}

// Name is how a chart legend calls the run, e.g. "tunnel upload (after fix)".
func (r BenchRun) Name() string {
	n := r.Path + " " + r.Direction
	if r.Label != "" {
		n += " (" + r.Label + ")"
	}
	return n
}

// ScenarioResult is one lab scenario: what broke, what wgperf found and fixed,
// and the throughput before and after.
type ScenarioResult struct {
	Name    string     `json:"name"`
	Case    string     `json:"case,omitempty"`
	Symptom string     `json:"symptom"`
	Finding finding.ID `json:"finding"` // the finding ID the scenario must produce
	Found   bool       `json:"found"`
	// Evidence holds the findings with that ID, their evidence and fixes.
	Evidence   []finding.Finding `json:"evidence,omitempty"`
	Unexpected []string          `json:"unexpected,omitempty"`
	Probes     []string          `json:"probes,omitempty"` // headlines of the active probes
	Fix        []string          `json:"fix,omitempty"`    // commands applied
	Before     bench.DirRate     `json:"before"`           // the upload's, tunnel and underlay
	After      bench.DirRate     `json:"after"`
	// Runs are the per-second runs before and after the fix (labelled).
	Runs    []BenchRun  `json:"runs,omitempty"`
	MTU     *mtu.Result `json:"mtu,omitempty"`
	Seconds float64     `json:"seconds"` // how long the scenario took
	Pass    bool        `json:"pass"`
	Why     string      `json:"why,omitempty"`
}

// Gain is after/before tunnel throughput, 0 when nothing passed before.
func (s ScenarioResult) Gain() float64 {
	if s.Before.Tunnel <= 0 {
		return 0
	}
	return s.After.Tunnel / s.Before.Tunnel
}

//go:embed html.tmpl
var htmlTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"inc":      func(i int) int { return i + 1 },
	"mbit":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"pct":      func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) },
	"change":   func(before, after float64) string { return fmt.Sprintf("%+.1f%%", (after/before-1)*100) },
	"ratio":    func(v float64) string { return fmt.Sprintf("%.2f×", v) },
	"join":     strings.Join,
	"joinIDs":  finding.JoinIDs,
	"severity": func(s finding.Severity) string { return s.String() },
	"time":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
}).Parse(htmlTemplate))

// view is the Document with everything the template computes made ready.
type view struct {
	Document
	Counts    map[string]int // findings per severity
	Bench     benchView
	MTUView   *mtuView
	Scenarios []scenarioView
	Passed    int // scenarios that passed
	FixChart  chart
	ICMP      *icmpView
	SweepView *sweepView
	FixView   *fixView
	Fonts     template.CSS // the font stack of page and charts
}

// chartFonts is the font stack the page and its charts use. The charts lay
// their text out for Arial's widths, which Liberation Sans shares (and
// Helvetica nearly), so it fits without embedding a font.
const chartFonts = `Arial, "Liberation Sans", Helvetica, sans-serif`

// legendEntry is one series of a chart, listed under it in HTML: a legend
// there never covers the data or runs off a narrow chart.
type legendEntry struct {
	Name   string
	Color  string // CSS colour
	Line   bool   // the series is a line
	Dashed bool   // a dashed line
	Hollow bool   // an outlined bar (else a filled bar or a marker alone)
	Marker string // the marker's character; "" for none
}

// benchView is a bench matrix with its charts.
type benchView struct {
	Matrix []matrixRow
	Charts []chart
}

type mtuView struct {
	*mtu.Result
	Chart chart
}

type scenarioView struct {
	ScenarioResult
	Anchor string
	Bench  benchView
	MTU    *mtuView
}

type chart struct {
	Title, Caption string
	SVG            template.HTML
	Legend         []legendEntry
}

// matrixRow is one direction, kind and label of the bench matrix.
type matrixRow struct {
	Direction, Kind, Label string
	Underlay, Tunnel       *iperf.Result
	Ratio                  float64 // tunnel / underlay
	HasRatio               bool    // both were measured (a dead tunnel's ratio is 0%)
}

// WriteHTML writes doc as one self-contained HTML page: inline CSS and inline
// SVG charts, no scripts, no external requests, so it opens offline and can be
// mailed as it is.
func WriteHTML(w io.Writer, doc Document) error {
	if doc.Title == "" {
		doc.Title = "wgperf report"
	}
	v := view{Document: doc, Counts: map[string]int{}}
	for _, f := range doc.Findings {
		v.Counts[f.Severity.String()]++
	}
	var err error
	if v.Bench, err = makeBenchView(doc.Runs, doc.Runs, ""); err != nil {
		return err
	}
	if v.MTUView, err = makeMTUView(doc.MTU); err != nil {
		return err
	}
	for i, s := range doc.Scenarios {
		sv := scenarioView{ScenarioResult: s, Anchor: fmt.Sprintf("scenario-%d", i+1)}
		// The charts compare the tunnel before and after; the matrix keeps the
		// underlay for the ratio.
		if sv.Bench, err = makeBenchView(s.Runs, pathRuns(s.Runs, PathTunnel), s.Name+": "); err != nil {
			return err
		}
		if sv.MTU, err = makeMTUView(s.MTU); err != nil {
			return err
		}
		if s.Pass {
			v.Passed++
		}
		v.Scenarios = append(v.Scenarios, sv)
	}
	if len(doc.Scenarios) > 0 {
		if v.FixChart.SVG, v.FixChart.Legend, err = scenarioChart(doc.Scenarios); err != nil {
			return err
		}
	}
	if v.ICMP, err = makeICMPView(doc.ICMPBurst); err != nil {
		return err
	}
	if v.SweepView, err = makeSweepView(doc.Sweep); err != nil {
		return err
	}
	if v.FixView, err = makeFixView(doc.Fix, doc.Runs); err != nil {
		return err
	}
	v.Fonts = template.CSS(chartFonts) // trusted: a constant
	// Render fully before writing, so a template error leaves no half page.
	// html/template quotes markup, not control characters: foreign text's
	// escape sequences are shown escaped, as on every output, for whoever
	// cats the file in a terminal.
	var b bytes.Buffer
	tw := shell.NewTerminalWriter(&b)
	if err := page.Execute(tw, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = b.WriteTo(w)
	return err
}

// barSet is one series of a grouped bar chart: outlined (what was, or what
// fails) or filled (what is, or what passes).
type barSet struct {
	Name   string
	Values []float64
	Hollow bool
}

// scenarioChart is a grouped bar chart of throughput before and after each
// fix: before as outlined bars, after as filled ones.
func scenarioChart(ss []ScenarioResult) (template.HTML, []legendEntry, error) {
	before, after := make([]float64, len(ss)), make([]float64, len(ss))
	names := make([]string, len(ss))
	for i, s := range ss {
		before[i], after[i], names[i] = s.Before.Tunnel, s.After.Tunnel, s.Name
	}
	return barChart("Tunnel throughput before and after each fix", "Mbit/s", false, names,
		[]barSet{{Name: "before", Values: before, Hollow: true}, {Name: "after", Values: after}})
}

// makeBenchView tabulates runs and charts the runs in charted.
func makeBenchView(runs, charted []BenchRun, titlePrefix string) (benchView, error) {
	charts, err := runCharts(charted, titlePrefix)
	return benchView{Matrix: benchMatrix(runs), Charts: charts}, err
}

func pathRuns(runs []BenchRun, path string) []BenchRun {
	var out []BenchRun
	for _, r := range runs {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func makeMTUView(m *mtu.Result) (*mtuView, error) {
	if m == nil {
		return nil, nil
	}
	v := &mtuView{Result: m}
	if len(m.Probes) > 0 {
		var err error
		if v.Chart.SVG, v.Chart.Legend, err = mtuChart(m); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// benchMatrix pairs tunnel and underlay runs of the same direction, kind and
// label.
func benchMatrix(runs []BenchRun) []matrixRow {
	var rows []matrixRow
	index := map[[3]string]int{}
	for _, r := range runs {
		if r.Result == nil {
			continue
		}
		key := [3]string{r.Direction, r.Kind(), r.Label}
		i, ok := index[key]
		if !ok {
			i = len(rows)
			index[key] = i
			rows = append(rows, matrixRow{Direction: r.Direction, Kind: r.Kind(), Label: r.Label})
		}
		switch r.Path {
		case PathTunnel:
			rows[i].Tunnel = r.Result
		case PathUnderlay:
			rows[i].Underlay = r.Result
		}
	}
	for i := range rows {
		if t, u := rows[i].Tunnel, rows[i].Underlay; t != nil && u != nil && u.Mbit() > 0 {
			rows[i].Ratio, rows[i].HasRatio = t.Mbit()/u.Mbit(), true
		}
	}
	return rows
}
