package report

import (
	"bytes"
	"context"
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

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

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
	page := render(t, Document{Title: evil, Findings: []finding.Finding{{ID: "mtu.x", Title: evil, Host: targettest.Spec("local"),
		Evidence: []finding.Evidence{{Source: "ip link", Key: "name", Value: evil}}}}})
	if i := strings.IndexFunc(page, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) }); i >= 0 {
		t.Errorf("raw control character %q in the page at %d: %q", page[i], i, page[max(0, i-20):min(len(page), i+20)])
	}
	if !strings.Contains(page, `gw\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\u009b2J`) {
		t.Error("the title is not in the page, escaped")
	}
}
