package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// Document is everything one HTML report shows. "bench", "diagnose" and
// "lab run" each fill the parts they have; empty parts are left out. Its JSON
// form is what "wgperf report --from" reads, and a "diagnose --json" output
// (findings, skipped, hosts) is a valid Document too.
type Document struct {
	Title     string            `json:"title,omitempty"`
	Generated time.Time         `json:"generated,omitempty"`
	Hosts     []Host            `json:"hosts,omitempty"`
	Findings  []finding.Finding `json:"findings"`
	Skipped   []check.Skip      `json:"skipped,omitempty"`
	// Runs are iperf3 tests through the tunnel and over the underlay, in both
	// directions; they make the bench matrix and the per-second charts.
	Runs      []BenchRun       `json:"runs,omitempty"`
	MTU       *MTUSearch       `json:"mtu,omitempty"`
	Scenarios []ScenarioResult `json:"scenarios,omitempty"`
}

// Paths and directions of a bench run.
const (
	PathTunnel   = "tunnel"
	PathUnderlay = "underlay"
	Upload       = "upload"   // from the first host to the second
	Download     = "download" // the reverse
)

// BenchRun is one iperf3 test in the bench matrix.
type BenchRun struct {
	Path      string `json:"path"`      // PathTunnel or PathUnderlay
	Direction string `json:"direction"` // Upload or Download
	// Label tells runs of the same path and direction apart, e.g. "before fix".
	Label  string        `json:"label,omitempty"`
	Result *iperf.Result `json:"result"`
}

// Name is how charts and tables call the run, e.g. "tunnel upload (after fix)".
func (r BenchRun) Name() string {
	n := r.Path + " " + r.Direction
	if r.Label != "" {
		n += " (" + r.Label + ")"
	}
	return n
}

// MTUSearch is a path-MTU search: the probe sizes tried, in order.
type MTUSearch struct {
	From  string    `json:"from"`           // host the probes left
	To    string    `json:"to"`             // address probed
	Steps []MTUStep `json:"steps"`          // in the order tried
	MTU   int       `json:"path_mtu"`       // largest packet that passed, IP header included
	Note  string    `json:"note,omitempty"` // e.g. "no ICMP came back: PMTUD black hole"
}

// MTUStep is one probe of a path-MTU search.
type MTUStep struct {
	Size   int    `json:"size"` // IP packet size
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"` // e.g. "frag-needed mtu 1400", "timeout"
}

// ScenarioResult is one lab scenario: what broke, what wgperf found and fixed,
// and the throughput before and after.
type ScenarioResult struct {
	Name    string  `json:"name"`
	Symptom string  `json:"symptom"`
	Finding string  `json:"finding"` // finding ID
	Fix     string  `json:"fix"`
	Before  float64 `json:"before_mbit"`
	After   float64 `json:"after_mbit"`
	Ratio   float64 `json:"ratio,omitempty"` // After/Before; computed when 0
	Seconds float64 `json:"seconds"`         // how long the scenario took
}

// ReadDocument reads a Document's JSON, refusing malformed input and documents
// with nothing to report.
func ReadDocument(r io.Reader) (*Document, error) {
	var d Document
	dec := json.NewDecoder(r)
	if err := dec.Decode(&d); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("results: empty input")
		case errors.As(err, &syn):
			return nil, fmt.Errorf("results: malformed JSON at byte %d: %v", syn.Offset, err)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("results: field %q: want %s, got JSON %s", typ.Field, typ.Type, typ.Value)
		}
		return nil, fmt.Errorf("results: %v", err)
	}
	if d.Findings == nil && d.Runs == nil && d.MTU == nil && d.Scenarios == nil && d.Hosts == nil {
		return nil, fmt.Errorf("results: no findings, hosts, runs, mtu or scenarios (not wgperf results?)")
	}
	for i, r := range d.Runs {
		if r.Result == nil {
			return nil, fmt.Errorf("results: run %d (%s) has no result", i+1, r.Name())
		}
	}
	return &d, nil
}

//go:embed html.tmpl
var htmlTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"inc":      func(i int) int { return i + 1 },
	"mbit":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"pct":      func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) },
	"ratio":    func(v float64) string { return fmt.Sprintf("%.2f×", v) },
	"join":     strings.Join,
	"severity": func(s finding.Severity) string { return s.String() },
	"time":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
}).Parse(htmlTemplate))

// view is the Document with everything the template computes made ready.
type view struct {
	Document
	Counts    map[string]int // findings per severity
	Matrix    []matrixRow
	Charts    []chart // per-second charts of the runs
	MTUChart  template.HTML
	Scenarios []ScenarioResult
	FixChart  template.HTML
}

type chart struct {
	Title string
	SVG   template.HTML
}

// matrixRow is one direction (and label) of the bench matrix.
type matrixRow struct {
	Direction, Label string
	Underlay, Tunnel *iperf.Result
	Ratio            float64 // tunnel / underlay; 0 when either is missing
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
	v.Matrix = benchMatrix(doc.Runs)
	var err error
	if v.Charts, err = runCharts(doc.Runs); err != nil {
		return err
	}
	if doc.MTU != nil && len(doc.MTU.Steps) > 0 {
		if v.MTUChart, err = mtuChart(doc.MTU); err != nil {
			return err
		}
	}
	for _, s := range doc.Scenarios {
		if s.Ratio == 0 && s.Before > 0 {
			s.Ratio = s.After / s.Before
		}
		v.Scenarios = append(v.Scenarios, s)
	}
	if len(v.Scenarios) > 0 {
		if v.FixChart, err = scenarioChart(v.Scenarios); err != nil {
			return err
		}
	}
	// Render fully before writing, so a template error leaves no half page.
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err = b.WriteTo(w)
	return err
}

// WriteHTMLFile writes doc to path, for commands with an --html FILE flag.
func WriteHTMLFile(path string, doc Document) error {
	var b bytes.Buffer
	if err := WriteHTML(&b, doc); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}

// benchMatrix pairs tunnel and underlay runs of the same direction and label.
func benchMatrix(runs []BenchRun) []matrixRow {
	var rows []matrixRow
	index := map[[2]string]int{}
	for _, r := range runs {
		key := [2]string{r.Direction, r.Label}
		i, ok := index[key]
		if !ok {
			i = len(rows)
			index[key] = i
			rows = append(rows, matrixRow{Direction: r.Direction, Label: r.Label})
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
			rows[i].Ratio = t.Mbit() / u.Mbit()
		}
	}
	return rows
}
