package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/probe/bench"
)

var shot = flag.String("shot", "", "TestScreenshot keeps its screenshot of the lab run report in this PNG file")

func fixture(name string) string { return filepath.Join("..", "..", "testdata", "report", name) }

// readFixture reads a recorded command output from testdata/report.
func readFixture(t testing.TB, name string) *Document {
	t.Helper()
	f, err := os.Open(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := ReadDocument(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

// labRunDoc is the report of a recorded "lab run --json"
// (testdata/report/labrun.json) as package scenario makes it: its
// TestReportGolden keeps testdata/report/labrun.document.json current.
func labRunDoc(t testing.TB) *Document {
	t.Helper()
	b, err := os.ReadFile(fixture("labrun.document.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// diagnosisJSON is "diagnose --json" of the broken multi-wan lab the exporter
// tests use: a critical stale route and ICMP rate-limit drops.
func diagnosisJSON(t testing.TB) []byte {
	t.Helper()
	sf, err := os.Open(filepath.Join("..", "..", "testdata", "exporter", "multiwan-a.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	snap, err := document.ReadSnapshot(sf)
	if err != nil {
		t.Fatal(err)
	}
	snaps := []*facts.Snapshot{snap}
	var b bytes.Buffer
	if err := diagnose.WriteJSON(&b, diagnose.NewDiagnosis(snaps, check.Run(snaps, check.Options{}))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func render(t testing.TB, doc Document) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, doc); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// walk calls fn on every element of an HTML document.
func walk(t testing.TB, page string, fn func(n *html.Node)) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.ElementNode {
			fn(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(root)
}

// selfContained fails the test when page loads anything from outside itself
// and returns how many of each element it has.
func selfContained(t *testing.T, page string) map[string]int {
	t.Helper()
	count := map[string]int{}
	walk(t, page, func(n *html.Node) {
		count[n.Data]++
		switch n.Data {
		case "script", "link", "iframe", "object", "embed", "img":
			t.Errorf("page has a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if (a.Key == "src" || a.Key == "href" || a.Key == "xlink:href") && !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "data:") {
				t.Errorf("<%s %s=%q> points outside the page", n.Data, a.Key, a.Val)
			}
		}
	})
	if strings.Contains(page, "url(http") || strings.Contains(page, "@import") {
		t.Error("CSS loads something from outside the page")
	}
	return count
}

func lacks(t *testing.T, page string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestLabRunReport renders a recorded "lab run --json": the overview, and per
// scenario its symptom, the finding with evidence, the fix applied, the
// before/after figures, charts of the tunnel before and after, and the MTU search.
func TestLabRunReport(t *testing.T) {
	doc := labRunDoc(t)
	if len(doc.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(doc.Scenarios))
	}
	page := render(t, *doc)
	count := selfContained(t, page)
	// Overview bars, then per scenario: tunnel throughput, cwnd and
	// retransmits (before and after on each); the black hole's MTU search.
	if want := 1 + 2*3 + 1; count["svg"] != want {
		t.Errorf("%d charts, want %d", count["svg"], want)
	}
	if count["section"] != 3 { // overview and two scenarios; no findings, bench or mtu of its own
		t.Errorf("%d sections, want 3", count["section"])
	}
	if strings.Contains(page, `id="findings"`) {
		t.Error("a lab run report has no findings of its own, only per scenario")
	}
	hole := doc.Scenarios[0]
	if hole.Name != "pmtud-blackhole" || !hole.Pass || hole.MTU == nil || len(hole.Evidence) != 1 {
		t.Fatalf("first scenario: %+v", hole)
	}
	lacks(t, page,
		"1 of 2 scenarios passed",
		`<a href="#scenario-1">pmtud-blackhole</a>`, `id="scenario-2"`,
		hole.Symptom,
		"mtu.pmtud-blackhole", hole.Evidence[0].Title, hole.Evidence[0].Evidence[0].Source, // finding and its evidence
		"ip link set dev wg-wgh1-a mtu 1340", // the fix applied
		"0.0 → <b>176.8</b> Mbit/s",          // tunnel before → after
		"0% → 93%",                           // ratio to the underlay
		"pmtud-blackhole: 1 stream, throughput per second",
		"tunnel upload (before fix)", "tunnel download (after fix)",
		"PMTUD black hole: probes of", "<b>1400</b> bytes", "MSS stepping through the tunnel",
		"tcp.congestion-control (missed)", "tcp.congestion-control not reported", // the failed scenario says why
	)
	// The charts compare the tunnel; the underlay stays in the matrix.
	if strings.Contains(page, "underlay upload (before fix)") {
		t.Error("scenario charts plot underlay runs")
	}
}

// TestBenchReport renders a recorded "bench --json" (single stream, 4
// streams and UDP, on a lossy lab).
func TestBenchReport(t *testing.T) {
	doc := readFixture(t, "bench.json")
	page := render(t, *doc)
	count := selfContained(t, page)
	// 1 stream and 4 streams: throughput, cwnd, retransmits; UDP: throughput.
	if count["svg"] != 7 {
		t.Errorf("%d charts, want 7", count["svg"])
	}
	if count["article"] != len(doc.Findings) || len(doc.Findings) == 0 {
		t.Errorf("%d finding articles, want %d (and some)", count["article"], len(doc.Findings))
	}
	rows := benchMatrix(doc.Runs)
	if len(rows) != 6 {
		t.Fatalf("%d matrix rows, want 6 (2 directions × 1 stream, 4 streams, UDP)", len(rows))
	}
	for _, r := range rows {
		if r.Tunnel == nil {
			t.Fatalf("%s %s: no tunnel run", r.Direction, r.Kind)
		}
		if r.Kind == "UDP 50 Mbit/s" {
			if r.Underlay != nil || r.Ratio != 0 {
				t.Errorf("UDP row has an underlay or ratio: %+v", r)
			}
			continue
		}
		if want := r.Tunnel.Mbit() / r.Underlay.Mbit(); r.Ratio != want || r.Ratio <= 0 || r.Ratio > 1.2 {
			t.Errorf("%s %s ratio %v, want %v", r.Direction, r.Kind, r.Ratio, want)
		}
	}
	lacks(t, page, "Bench matrix", "cpu.saturated", "udp.rcvbuf-errors", "4 streams, throughput per second", "UDP 50 Mbit/s, throughput per second",
		"tunnel blue circles, underlay grey squares (outlined)")
}

// TestMTUReport renders a recorded "mtu --json" (1400-byte hop, ICMP allowed).
func TestMTUReport(t *testing.T) {
	doc := readFixture(t, "mtu.json")
	page := render(t, *doc)
	count := selfContained(t, page)
	if count["svg"] != 1 {
		t.Errorf("%d charts, want the MTU search", count["svg"])
	}
	lacks(t, page, "Path MTU", "<b>1400</b> bytes", "(a router said mtu = 1400)", "WireGuard MTU that fits</dt><dd><b>1340</b>")
	if strings.Contains(page, "Bench matrix") {
		t.Error("an MTU report has no bench matrix")
	}
}

// TestDiagnoseReport renders "diagnose --inventory --json" output: findings
// with evidence and fixes, and the host that could not be reached.
func TestDiagnoseReport(t *testing.T) {
	in := append([]byte(`{"unreachable": [{"host": "ssh:m42", "error": "ssh: connect to host m42 port 22: No route to host"}],`),
		bytes.TrimPrefix(bytes.TrimSpace(diagnosisJSON(t)), []byte("{"))...)
	doc, err := ReadDocument(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, *doc)
	count := selfContained(t, page)
	if count["article"] != len(doc.Findings) || count["svg"] != 0 {
		t.Errorf("%d finding articles (want %d), %d charts (want 0)", count["article"], len(doc.Findings), count["svg"])
	}
	lacks(t, page,
		"route.stale-endpoint", // the critical finding...
		"ip route del 203.0.113.2 via 192.0.2.1 dev eth1 table main", // ...its fix command...
		"cnt_icmpflood", // ...and evidence of the other one
		`<span class="critical">1 critical</span>`,
		"Hosts that could not be reached", "No route to host",
	)
}

func TestWriteHTMLEscapes(t *testing.T) {
	page := render(t, Document{
		Title:     `<script>alert(1)</script>`,
		Scenarios: []ScenarioResult{{Name: `<img src=x onerror=alert(1)>`, Before: bench.DirRate{Tunnel: 10}, After: bench.DirRate{Tunnel: 20}}},
	})
	walk(t, page, func(n *html.Node) {
		if n.Data == "script" || n.Data == "img" {
			t.Errorf("user text became a <%s> element", n.Data)
		}
	})
	if !strings.Contains(page, "2.00×") {
		t.Error("gain not computed from before and after")
	}
}

func TestWriteHTMLEmptyParts(t *testing.T) {
	page := render(t, Document{Findings: nil})
	if !strings.Contains(page, "No check found a problem.") || strings.Contains(page, "<svg") || strings.Contains(page, "Bench matrix") {
		t.Errorf("an empty document should say there are no findings and draw nothing:\n%s", page)
	}
}

// TestFromBench keeps finished runs with their kind and drops failed ones.
func TestFromBench(t *testing.T) {
	doc := readFixture(t, "bench.json")
	if len(doc.Runs) != 10 {
		t.Fatalf("%d runs, want 10", len(doc.Runs))
	}
	rep := &bench.Report{Runs: []bench.Run{
		{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: 4}, Result: doc.Runs[0].Result},
		{Spec: bench.Spec{Path: bench.PathUnderlay, Direction: bench.Upload, Streams: 1}, Error: "iperf3: unable to connect"},
	}}
	runs := BenchRuns(rep, LabelAfter)
	if len(runs) != 1 || runs[0].Kind() != "4 streams" || runs[0].Name() != "tunnel upload (after fix)" {
		t.Errorf("BenchRuns = %+v", runs)
	}
	if BenchRuns(nil, "") != nil {
		t.Error("a missing bench (the black hole stalled it) has runs")
	}
}

// TestReadDocumentDetects tells each command's JSON apart.
func TestReadDocumentDetects(t *testing.T) {
	for _, tc := range []struct {
		file string
		ok   func(*Document) bool
	}{
		{"bench.json", func(d *Document) bool { return len(d.Runs) > 0 && d.MTU == nil && len(d.Scenarios) == 0 }},
		{"mtu.json", func(d *Document) bool { return d.MTU != nil && len(d.MTU.Probes) > 0 && d.Runs == nil }},
	} {
		if d := readFixture(t, tc.file); !tc.ok(d) {
			t.Errorf("%s read as %q with %d runs, mtu %v, %d scenarios", tc.file, d.Title, len(d.Runs), d.MTU != nil, len(d.Scenarios))
		}
	}
	d, err := ReadDocument(bytes.NewReader(diagnosisJSON(t)))
	if err != nil || d.Title != "wgperf diagnose" || len(d.Findings) == 0 {
		t.Errorf("diagnose JSON: %v, %+v", err, d)
	}
}

// A document's kind decides how it is read, whatever other fields it has:
// an mtu result with "runs", "cells" and "tunnel_addr" (fields of a bench)
// is still an mtu result, and "diagnose --inventory" output is a diagnosis.
func TestReadDocumentDispatchesOnKind(t *testing.T) {
	mtuDoc := `{"schema_version": 1, "kind": "mtu", "client": "local", "addr": "192.0.2.1", "path_mtu": 1400,
	  "probes": [{"mtu": 1400, "passed": true}], "findings": [], "runs": [], "cells": [], "tunnel_addr": "x"}`
	d, err := ReadDocument(strings.NewReader(mtuDoc))
	if err != nil || d.MTU == nil || d.MTU.PathMTU != 1400 || d.Runs != nil {
		t.Errorf("kind mtu with bench fields: %v, %+v", err, d)
	}
	fleetDoc := `{"schema_version": 1, "kind": "diagnose-fleet", "findings": [], "skipped": [], "hosts": [],
	  "unreachable": [{"host": "ssh:down", "error": "ssh: connect to host down port 22: No route to host"}]}`
	d, err = ReadDocument(strings.NewReader(fleetDoc))
	if err != nil || d.Title != "wgperf diagnose" || len(d.Unreachable) != 1 {
		t.Errorf("kind diagnose-fleet: %v, %+v", err, d)
	}
}

func TestReadDocumentErrors(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"", "results: empty input"},
		{"{", "results: malformed JSON"},
		{"[1, 2]", `results: "findings" output has no report here`},
		{`{"findings": 3}`, `diagnose results: field "findings"`},
		{`{"schema_version": 1, "host": "local"}`, `results: not the JSON of a wgperf document (no "kind", and not the fields of one)`},
		{`{"schema_version": 1, "host": "local", "collected_at": "2026-04-07T19:56:00Z"}`, "wgperf diagnose --from FILE --html"},
		{`{"schema_version": 1, "kind": "fix-plan", "items": []}`, `"fix-plan" output has no report here`},
		{`{"schema_version": 1, "kind": "doctor", "findings": []}`, `run wgperf doctor with --html FILE`},
		{`{"schema_version": 1, "kind": "checks", "findings": []}`, `"checks" output has no report here`},
		{`{"schema_version": 1, "kind": "snapshot", "host": "local"}`, "wgperf diagnose --from FILE --html"},
		{`{"kind": 7, "findings": []}`, `"kind" is 7, not the name of a wgperf document`},
		{`{"kind": "bench", "findings": []}`, "bench results: no finished runs"},
		{`{"scenarios": []}`, `"lab-run" output has no report here`}, // scenario.ReadReport makes it
		{`{"tunnel_addr": "10.0.0.2", "cells": [], "runs": [{"path": "tunnel", "error": "refused"}]}`, "bench results: no finished runs"},
	} {
		_, err := ReadDocument(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadDocument(%q) = %v, want error containing %q", tc.in, err, tc.err)
		}
	}
}
