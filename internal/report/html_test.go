package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

var shot = flag.String("shot", "", "TestScreenshot writes a screenshot of the sample report to this PNG file")

// sampleDocument is the lab recording (bench runs, MTU search, a measured
// fix) plus the findings of the broken multi-wan lab the exporter tests use,
// so every part of the page has real content.
func sampleDocument(t testing.TB) Document {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "report", "lab.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := ReadDocument(f)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := os.Open(filepath.Join("..", "..", "testdata", "exporter", "multiwan-a.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	snap, err := collect.ReadSnapshot(sf)
	if err != nil {
		t.Fatal(err)
	}
	snaps := []*facts.Snapshot{snap}
	d := NewDiagnosis(snaps, check.Run(snaps, check.Options{}))
	doc.Findings = append(d.Findings, doc.Findings...)
	doc.Hosts = append(doc.Hosts, d.Hosts...)
	return *doc
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

func TestWriteHTMLIsSelfContained(t *testing.T) {
	doc := sampleDocument(t)
	page := render(t, doc)
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
	// 3 run charts (throughput, cwnd, retransmits) + MTU search + before/after.
	if count["svg"] != 5 {
		t.Errorf("%d charts, want 5", count["svg"])
	}
	if count["article"] != len(doc.Findings) {
		t.Errorf("%d finding articles, want %d", count["article"], len(doc.Findings))
	}
	for _, want := range []string{
		"route.stale-endpoint", // the critical finding...
		"ip route del 203.0.113.2 via 192.0.2.1 dev eth1 table main", // ...its fix command...
		"cnt_icmpflood", // ...and evidence of the other one
		"Bench matrix", "Path MTU", "Before and after the fixes",
		"<b>1400</b> bytes", // the recorded hop
		"lossy-cubic",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestWriteHTMLEscapes(t *testing.T) {
	page := render(t, Document{
		Title:     `<script>alert(1)</script>`,
		Scenarios: []ScenarioResult{{Name: `<img src=x onerror=alert(1)>`, Before: 10, After: 20}},
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

func TestBenchMatrixPairsPaths(t *testing.T) {
	doc := sampleDocument(t)
	rows := benchMatrix(doc.Runs)
	if len(rows) != 2 {
		t.Fatalf("%d matrix rows, want upload and download", len(rows))
	}
	for _, r := range rows {
		if r.Tunnel == nil || r.Underlay == nil {
			t.Fatalf("%s: tunnel or underlay missing", r.Direction)
		}
		if want := r.Tunnel.Mbit() / r.Underlay.Mbit(); r.Ratio != want || r.Ratio <= 0 || r.Ratio > 1.2 {
			t.Errorf("%s ratio %v, want %v", r.Direction, r.Ratio, want)
		}
	}
}

func TestReadDocument(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"", "results: empty input"},
		{"{", "results: unexpected EOF"},
		{`{"findings": 3}`, `results: field "findings"`},
		{`{"schema_version": 1, "host": "local"}`, "not wgperf results?"},
		{`{"runs": [{"path": "tunnel", "direction": "upload"}]}`, "run 1 (tunnel upload) has no result"},
	} {
		_, err := ReadDocument(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadDocument(%q) = %v, want error containing %q", tc.in, err, tc.err)
		}
	}
	// "diagnose --json" output is a document.
	var b bytes.Buffer
	d := Diagnosis{Findings: sampleDocument(t).Findings, Hosts: []Host{{Host: "local"}}}
	if err := WriteJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	doc, err := ReadDocument(&b)
	if err != nil || len(doc.Findings) != len(d.Findings) {
		t.Fatalf("diagnose JSON as document: %v, %d findings", err, len(doc.Findings))
	}
}

// browser runs headless Chromium on the sample report with args and returns
// its output and log.
func browser(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	testutil.RequireTools(t, "chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := WriteHTMLFile(page, sampleDocument(t)); err != nil {
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

// TestBrowserRenders opens the report in headless Chromium: the DOM it built
// has every chart, and the console has no errors (a blocked external request
// would be one, through the page's Content-Security-Policy).
func TestBrowserRenders(t *testing.T) {
	dom, log := browser(t, "--dump-dom")
	if n := strings.Count(dom, "<svg"); n != 5 {
		t.Errorf("rendered DOM has %d svg charts, want 5", n)
	}
	if !strings.Contains(dom, "route.stale-endpoint") {
		t.Error("rendered DOM lacks the findings")
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Content Security Policy") {
			t.Errorf("browser console: %s", line)
		}
	}
}

// TestScreenshot saves a screenshot of the sample report for a person to
// look at: go test ./internal/report -run Screenshot -args -shot out.png
func TestScreenshot(t *testing.T) {
	if *shot == "" {
		t.Skip("pass -shot FILE.png to take a screenshot")
	}
	path, err := filepath.Abs(*shot)
	if err != nil {
		t.Fatal(err)
	}
	browser(t, "--screenshot="+path, "--window-size=1280,8000", "--hide-scrollbars")
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", path, err)
	}
	t.Logf("screenshot: %s", path)
}
