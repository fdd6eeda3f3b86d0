package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
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

// browser runs headless Chromium on the lab run report with args and returns
// its output and log.
func browser(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	testutil.RequireTools(t, "chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	doc := labRunDoc(t)
	doc.Generated = time.Date(2026, 11, 22, 0, 56, 0, 0, time.UTC)
	var html bytes.Buffer
	if err := WriteHTML(&html, *doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0"}, args...)
	all = append(all, "file://"+page)
	// Stream keeps stderr (the console log) even when chromium succeeds.
	var out, log bytes.Buffer
	if err := target.Local().Stream(ctx, nil, &out, &log, "chromium", all...); err != nil {
		t.Fatalf("chromium: %v\n%s", err, log.String())
	}
	return out.String(), log.String()
}

// TestBrowserRenders opens the lab run report in headless Chromium: the DOM
// it built has every chart and scenario, and the console has no errors (a
// blocked external request would be one, through the page's
// Content-Security-Policy).
func TestBrowserRenders(t *testing.T) {
	dom, log := browser(t, "--dump-dom")
	// The demo report (make demo writes a lab run report like this one) was
	// 575 KB when it embedded a font; it must stay small enough to mail.
	var page bytes.Buffer
	doc := labRunDoc(t)
	if err := WriteHTML(&page, *doc); err != nil {
		t.Fatal(err)
	}
	if page.Len() > 150*1024 {
		t.Errorf("lab run report is %d KB, want under 150 KB", page.Len()/1024)
	}
	t.Logf("lab run report: %d bytes", page.Len())
	if n := strings.Count(dom, "<svg"); n != 8 {
		t.Errorf("rendered DOM has %d svg charts, want 8", n)
	}
	for _, want := range []string{`id="scenario-1"`, `id="scenario-2"`, "mtu.pmtud-blackhole", "ip link set dev wg-wgh1-a mtu 1340"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Content Security Policy") {
			t.Errorf("browser console: %s", line)
		}
	}
}

// TestScreenshot renders the lab run report in headless Chromium and looks at
// the picture: a full-width page, mostly the page's white, with the charts'
// tunnel blue and the before-fix vermillion actually drawn (a page whose
// charts failed to render, or rendered in the browser's fallback colours,
// fails). To keep the picture for a person to look at:
// go test ./internal/report -run Screenshot -args -shot out.png
func TestScreenshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.png")
	if *shot != "" {
		var err error
		if path, err = filepath.Abs(*shot); err != nil {
			t.Fatal(err)
		}
	}
	browser(t, "--screenshot="+path, "--window-size=1280,4000", "--hide-scrollbars")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 {
		t.Errorf("screenshot %dx%d, want 1280 wide", b.Dx(), b.Dy())
	}
	near := func(c color.RGBA, hex string) bool {
		var want color.RGBA
		if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &want.R, &want.G, &want.B); err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
		return d(c.R, want.R) < 12 && d(c.G, want.G) < 12 && d(c.B, want.B) < 12
	}
	var white, blue, vermillion, all int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			all++
			switch {
			case c.R > 245 && c.G > 245 && c.B > 245:
				white++
			case near(c, colTunnel):
				blue++
			case near(c, colBefore):
				vermillion++
			}
		}
	}
	t.Logf("screenshot %s: %dx%d, white %.0f%%, tunnel blue %d, vermillion %d sampled pixels", path, b.Dx(), b.Dy(), 100*float64(white)/float64(all), blue, vermillion)
	if white < all/2 || white == all {
		t.Errorf("screenshot is %.0f%% white: want a page, not a blank or a solid fill", 100*float64(white)/float64(all))
	}
	if blue < 200 || vermillion < 50 {
		t.Errorf("charts not drawn in the report's palette: %d tunnel-blue and %d vermillion pixels sampled", blue, vermillion)
	}
}

// TestChartIntervalsDropSliver: the recorded lossy-cubic download after the
// fix ends with a 25 ms interval at 410 Mbit/s over a 200 Mbit/s link.
func TestChartIntervalsDropSliver(t *testing.T) {
	doc := labRunDoc(t)
	var run *BenchRun
	for i, r := range doc.Scenarios[1].Runs {
		if r.Path == PathTunnel && r.Direction == Download && r.Label == LabelAfter {
			run = &doc.Scenarios[1].Runs[i]
		}
	}
	if run == nil {
		t.Fatal("no tunnel download after the fix in lossy-cubic")
	}
	got := chartIntervals(run.Result)
	if len(run.Result.Measured()) != 3 || len(got) != 2 {
		t.Fatalf("%d of %d measured intervals charted, want 2 of 3", len(got), len(run.Result.Measured()))
	}
	for _, iv := range got {
		if iv.Mbit > 200 {
			t.Errorf("charted %.0f Mbit/s over a 200 Mbit/s link (%.3f-%.3f s)", iv.Mbit, iv.Start, iv.End)
		}
	}
}

// TestChartsUseThePageFont: no font is embedded; every chart's text is in
// the page's own font stack, whose first faces have the metrics the charts
// are laid out for.
func TestChartsUseThePageFont(t *testing.T) {
	page := render(t, *labRunDoc(t))
	if strings.Contains(page, "@font-face") || strings.Contains(page, "base64") {
		t.Error("the page embeds a font")
	}
	if !strings.Contains(page, "body { font-family: "+chartFonts+";") {
		t.Errorf("the page's font is not %s", chartFonts)
	}
	charts := 0
	walk(t, page, func(n *html.Node) {
		switch n.Data {
		case "svg":
			charts++
			for _, a := range n.Attr {
				if a.Key == "font-family" && a.Val != chartFonts {
					t.Errorf("chart in font %q, want %q", a.Val, chartFonts)
				}
			}
		case "text":
			for _, a := range n.Attr {
				if a.Key == "font-family" || a.Key == "style" {
					t.Errorf("chart text sets its own font: %s=%q", a.Key, a.Val)
				}
			}
		}
	})
	if n := strings.Count(page, `font-family="`+template.HTMLEscapeString(chartFonts)+`"`); n != charts || charts == 0 {
		t.Errorf("%d of %d charts name the page's font stack", n, charts)
	}
}

// TestReportAccessible: every chart is an image with a name (role, aria-label
// and title), every table has a caption and column headers with a scope, and
// every line chart lists as many legend entries (outside the chart) as it
// draws series.
func TestReportAccessible(t *testing.T) {
	pages := map[string]string{"shape sweep": render(t, sweepDoc(t)), "fix --verify": render(t, fixDoc(t)), "lab run": render(t, *labRunDoc(t))}
	for _, name := range []string{"bench.json", "mtu.json", "icmp-burst.json"} {
		pages[name] = render(t, *readFixture(t, name))
	}
	for fixture, page := range pages {
		walk(t, page, func(n *html.Node) {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch n.Data {
			case "svg":
				if attr["role"] != "img" || attr["aria-label"] == "" {
					t.Errorf("%s: chart without role=img and aria-label: %v", fixture, attr)
				}
				if c := firstElement(n); c == nil || c.Data != "title" || c.FirstChild == nil || c.FirstChild.Data != attr["aria-label"] {
					t.Errorf("%s: chart %q lacks a <title> first", fixture, attr["aria-label"])
				}
			case "table":
				if c := firstElement(n); c == nil || c.Data != "caption" {
					t.Errorf("%s: table without a caption", fixture)
				}
			case "th":
				if attr["scope"] == "" {
					t.Errorf("%s: <th> without scope", fixture)
				}
			case "figure":
				if strings.Contains(renderNode(t, n), "<polyline") || strings.Contains(renderNode(t, n), "<path") {
					if !strings.Contains(renderNode(t, n), `<ul class="legend"`) {
						t.Errorf("%s: chart without a legend", fixture)
					}
				}
			}
		})
	}
}

func firstElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

func renderNode(t *testing.T, n *html.Node) string {
	t.Helper()
	var b bytes.Buffer
	if err := html.Render(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBadgeContrast: text on every severity badge and every coloured text
// class meets WCAG AA (4.5:1) against its background.
func TestBadgeContrast(t *testing.T) {
	rule := regexp.MustCompile(`\.(critical|warning|info|ok) \{ background: (#[0-9a-f]{6}); color: (#[0-9a-f]{3,6}); \}`)
	found := 0
	for _, m := range rule.FindAllStringSubmatch(htmlTemplate, -1) {
		found++
		if c := contrast(m[2], m[3]); c < 4.5 {
			t.Errorf(".%s badge: %s on %s has contrast %.2f:1, want at least 4.5:1", m[1], m[3], m[2], c)
		}
	}
	if found != 4 {
		t.Fatalf("found %d badge rules, want 4 (critical, warning, info, ok)", found)
	}
	text := regexp.MustCompile(`\.(good|bad|meta|where|id) \{ color: (#[0-9a-f]{3,6});`)
	for _, m := range text.FindAllStringSubmatch(htmlTemplate, -1) {
		if c := contrast("#ffffff", m[2]); c < 4.5 {
			t.Errorf(".%s text %s on white has contrast %.2f:1", m[1], m[2], c)
		}
	}
	if c := contrast("#ffffff", "#ef8f00"); c >= 4.5 {
		t.Fatalf("contrast() is wrong: white on #ef8f00 is 2.4:1, got %.2f", c)
	}
}

// contrast is the WCAG 2 contrast ratio of two #rgb or #rrggbb colours.
func contrast(a, b string) float64 {
	lum := func(h string) float64 {
		h = strings.TrimPrefix(h, "#")
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		var l float64
		for i, w := range []float64{0.2126, 0.7152, 0.0722} {
			v, _ := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
			c := float64(v) / 255
			if c <= 0.03928 {
				c /= 12.92
			} else {
				c = math.Pow((c+0.055)/1.055, 2.4)
			}
			l += w * c
		}
		return l
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// The page's own words never say "seed 00N" (finding text comes from the checks).
func TestTemplateNamesNoSeeds(t *testing.T) {
	if m := regexp.MustCompile(`(?i)\bseeds?\b`).FindString(htmlTemplate); m != "" {
		t.Errorf("html.tmpl says %q", m)
	}
}

// endlessSpaces is a reader of n blanks (valid JSON padding) that counts what
// was taken from it.
type endlessSpaces struct{ left, read int64 }

func (r *endlessSpaces) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > r.left {
		n = r.left
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	r.left -= n
	r.read += n
	return int(n), nil
}

// TestReadDocumentRefusesOversize is issue 30 item 9: "report --from" reads at
// most document.MaxBytes (64 MiB, the cap of every reader) and says so in
// one line, instead of reading all of /dev/zero.
func TestReadDocumentRefusesOversize(t *testing.T) {
	in := &endlessSpaces{left: 80 << 20}
	_, err := ReadDocument(in)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") || strings.Contains(err.Error(), "\n") {
		t.Errorf("ReadDocument(80 MiB) = %v, want one line saying it is larger than 64 MiB", err)
	}
	if in.read > 64<<20+64<<10 {
		t.Errorf("read %d bytes of the input, want at most about 64 MiB", in.read)
	}
}

// TestWriteHTMLEscapesControls is issue 30 item 8 for HTML: a host's text
// with an OSC 52 clipboard write, a screen clear or a C1 CSI in it reaches
// the file escaped, so "cat report.html" in a terminal obeys none of them.
func TestWriteHTMLEscapesControls(t *testing.T) {
	evil := "gw\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\u009b2J"
	page := render(t, Document{Title: evil, Findings: []finding.Finding{{ID: "mtu.x", Title: evil, Host: "local",
		Evidence: []finding.Evidence{{Source: "ip link", Key: "name", Value: evil}}}}})
	if i := strings.IndexFunc(page, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) }); i >= 0 {
		t.Errorf("raw control character %q in the page at %d: %q", page[i], i, page[max(0, i-20):min(len(page), i+20)])
	}
	if !strings.Contains(page, `gw\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\u009b2J`) {
		t.Error("the title is not in the page, escaped")
	}
}
