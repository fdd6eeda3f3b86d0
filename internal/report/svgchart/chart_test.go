package svgchart

import (
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

const blue, vermillion = "#0072b2", "#d55e00"

// drawn are the elements a chart may hold; anything else (a <script>, an
// <a>, a <foreignObject>) would be text that became markup.
var drawn = []string{"svg", "title", "g", "path", "polyline", "circle", "rect", "text"}

// parsed checks svg is well-formed XML of drawn elements only and returns
// its elements' names and the character data of each <text> and <title>, in
// document order.
func parsed(t *testing.T, svg string) (elements, texts []string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if !slices.Contains(drawn, tok.Name.Local) {
				t.Errorf("chart has a <%s> element", tok.Name.Local)
			}
			elements = append(elements, tok.Name.Local)
			stack = append(stack, tok.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && (stack[len(stack)-1] == "text" || stack[len(stack)-1] == "title") {
				texts = append(texts, string(tok))
			}
		}
	}
	return elements, texts
}

// TestEscapesText: titles, axis labels and category names (hosts' names,
// untrusted) reach the SVG as text, in XML and in a browser's HTML parser
// alike; control characters XML cannot hold become U+FFFD.
func TestEscapesText(t *testing.T) {
	evil := []string{
		`</text><script>alert(1)</script>`,
		`"><foreignObject onload="x">`,
		`a & b 'quoted'`,
		"gw\x1b[2J",
	}
	c := Chart{
		Title: evil[0], XLabel: evil[1], YLabel: evil[2], Width: 600, Height: 260, FontFamily: `Arial, "Liberation Sans"`,
		X:    Axis{Categories: evil},
		Bars: []Bars{{Values: []float64{1, 2, 3, 4}, Color: blue}},
	}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	_, texts := parsed(t, svg)
	for _, want := range append(evil[:3], "gw\uFFFD[2J") {
		if !slices.Contains(texts, want) {
			t.Errorf("text %q not drawn as text; texts %q", want, texts)
		}
	}
	root, err := html.Parse(strings.NewReader("<!doctype html><body>" + svg))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data != "html" && n.Data != "head" && n.Data != "body" && !slices.Contains(drawn, n.Data) {
			t.Errorf("an HTML parser reads a <%s> element", n.Data)
		}
		if n.Type == html.ElementNode && n.Data == "svg" {
			for _, a := range n.Attr {
				if a.Key == "font-family" && a.Val != c.FontFamily {
					t.Errorf("font-family %q, want %q", a.Val, c.FontFamily)
				}
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(root)
	if strings.ContainsRune(svg, '\x1b') {
		t.Error("a control character reached the SVG")
	}
}

// TestRefuses: a chart that would draw wrong, or put an attribute's text
// where a colour belongs, is an error.
func TestRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Chart
		err  string
	}{
		{"no size", Chart{}, "no size"},
		{"bars short of categories", Chart{Width: 1, Height: 1, X: Axis{Categories: []string{"a", "b"}}, Bars: []Bars{{Values: []float64{1}, Color: blue}}}, "1 bar values for 2 categories"},
		{"colour with markup", Chart{Width: 1, Height: 1, Lines: []Line{{Color: `red" onload="x`}}}, "is not #rrggbb"},
		{"colour by name", Chart{Width: 1, Height: 1, X: Axis{Categories: []string{"a"}}, Bars: []Bars{{Values: []float64{1}, Color: "red"}}}, "is not #rrggbb"},
		{"bars and lines", Chart{Width: 1, Height: 1, X: Axis{Categories: []string{"a"}}, Bars: []Bars{{Values: []float64{1}, Color: blue}}, Lines: []Line{{Color: blue}}}, "bars and lines"},
	} {
		if _, err := tc.c.SVG(); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.err)
		}
	}
}

// TestRanges: an axis shows its own range, or fits the data (NaN and
// infinities left out); bars rise from zero; one value sits mid-axis.
func TestRanges(t *testing.T) {
	pts := []Point{{1, 180}, {2, 190}, {3, math.NaN()}, {math.Inf(1), 5}, {4, 170}}
	for _, tc := range []struct {
		name string
		c    Chart
		x, y [2]float64
	}{
		{"fits the data", Chart{Lines: []Line{{Points: pts}}}, [2]float64{1, 4}, [2]float64{170, 190}},
		{"own range", Chart{X: Axis{Min: 0.5, Max: 4.5}, Y: Axis{Min: 0, Max: 200}, Lines: []Line{{Points: pts}}}, [2]float64{0.5, 4.5}, [2]float64{0, 200}},
		{"one point", Chart{Lines: []Line{{Points: []Point{{2, 100}}}}}, [2]float64{1.5, 2.5}, [2]float64{99.5, 100.5}},
		{"no data", Chart{}, [2]float64{0, 1}, [2]float64{0, 1}},
		{"bars", Chart{X: Axis{Categories: []string{"a", "b", "c"}}, Bars: []Bars{{Values: []float64{5, 7, 3}}}}, [2]float64{-0.5, 2.5}, [2]float64{0, 7}},
		{"bars below zero", Chart{X: Axis{Categories: []string{"a", "b"}}, Bars: []Bars{{Values: []float64{-2, 3}}}}, [2]float64{-0.5, 1.5}, [2]float64{-2, 3}},
	} {
		if x, y := tc.c.ranges(); x != tc.x || y != tc.y {
			t.Errorf("%s: ranges %v, %v; want %v, %v", tc.name, x, y, tc.x, tc.y)
		}
	}
}

// TestScales: the range's ends land on the plot area's edges, Y upwards,
// and a point is drawn where the scale puts it.
func TestScales(t *testing.T) {
	c := Chart{Width: 600, Height: 262, XLabel: "seconds", YLabel: "Mbit/s", Y: Axis{Min: 0, Max: 200},
		Lines: []Line{{Points: []Point{{1, 0}, {2, 100}, {3, 200}}, Color: blue, Width: 2}}}
	l := c.layout()
	if l.x0 <= 0 || l.x1 >= c.Width || l.y0 <= 0 || l.y1 >= c.Height || l.height != c.Height {
		t.Fatalf("plot area %v..%v × %v..%v in a %v×%v drawing %v high", l.x0, l.x1, l.y0, l.y1, c.Width, c.Height, l.height)
	}
	for _, tc := range []struct{ got, want float64 }{
		{l.sx(1), l.x0}, {l.sx(3), l.x1}, {l.sx(2), (l.x0 + l.x1) / 2},
		{l.sy(0), l.y1}, {l.sy(200), l.y0}, {l.sy(50), l.y1 - (l.y1-l.y0)/4},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("scaled to %v, want %v", tc.got, tc.want)
		}
	}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	mid := num(l.sx(2)) + "," + num(l.sy(100))
	if !strings.Contains(svg, `<polyline points="`+num(l.x0)+","+num(l.y1)+" "+mid+" "+num(l.x1)+","+num(l.y0)+`"`) {
		t.Errorf("line not drawn through its scaled points (middle %s):\n%s", mid, svg)
	}
}

// TestSeries: each line is drawn in its colour and dashes, each marker in
// its shape and fill; a zero bar still shows, flat; bars sit side by side.
func TestSeries(t *testing.T) {
	lines := Chart{Width: 600, Height: 262, Y: Axis{Min: 0, Max: 10}, Lines: []Line{
		{Points: []Point{{1, 1}, {2, 2}}, Color: blue, Width: 2, Marker: Circle, MarkerRadius: 3},
		{Points: []Point{{1, 3}, {2, 4}}, Color: vermillion, Width: 2, Dashed: true, Marker: Triangle, MarkerRadius: 3},
		{Points: []Point{{1, 5}, {2, 6}}, Color: "#555555", Marker: Cross, MarkerRadius: 3}, // markers only
	}}
	svg, err := lines.SVG()
	if err != nil {
		t.Fatal(err)
	}
	elements, _ := parsed(t, svg)
	count := func(name string) int {
		n := 0
		for _, e := range elements {
			if e == name {
				n++
			}
		}
		return n
	}
	if count("polyline") != 2 || count("circle") != 2 || strings.Count(svg, `stroke-dasharray="6 4"`) != 1 {
		t.Errorf("%d lines (want 2), %d circles (want 2), %d dashed (want 1):\n%s", count("polyline"), count("circle"), strings.Count(svg, "stroke-dasharray"), svg)
	}
	for _, want := range []string{`<g fill="#0072b2"><circle`, `<g fill="#ffffff" stroke="#d55e00" stroke-width="1.5"><path`, `<g fill="none" stroke="#555555" stroke-width="2"><path`} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %s in\n%s", want, svg)
		}
	}

	bars := Chart{Width: 600, Height: 262, X: Axis{Categories: []string{"a", "b"}}, Y: Axis{Min: 0, Max: 10}, Bars: []Bars{
		{Values: []float64{0, 5}, Color: vermillion, Hollow: true},
		{Values: []float64{10, 0}, Color: blue},
	}}
	l := bars.layout()
	rects := bars.barRects(l)
	if len(rects) != 4 {
		t.Fatalf("%d bars, want 4 (zeros too)", len(rects))
	}
	base := l.sy(0)
	if b := rects[0]; b.top != base || b.base != base || b.fill != "#ffffff" || b.color != vermillion || !strings.Contains(b.path(), "V"+num(base)+"H") {
		t.Errorf("a zero outlined bar: %+v, want a flat outline at %v on white", b, base)
	}
	if b := rects[2]; b.top != l.sy(10) || b.base != base || b.fill != blue {
		t.Errorf("a full filled bar: %+v, want it from %v up to %v in blue", b, base, l.sy(10))
	}
	// Same category: the outlined bar left of the filled one, apart, around the category's tick.
	if a, b := rects[0], rects[2]; a.left+a.width >= b.left || a.left >= l.sx(0) || b.left+b.width <= l.sx(0) {
		t.Errorf("bars of one category overlap or swap: %+v, %+v around %v", a, b, l.sx(0))
	}
}

// TestLongCategories: names that do not fit side by side turn and make the
// drawing taller (the plot keeps its height, the Y title stays beside its
// ticks); a long name is shortened with the whole of it as a tooltip.
func TestLongCategories(t *testing.T) {
	short := Chart{Width: 600, Height: 262, X: Axis{Categories: []string{"uncapped", "cap 200 Mbit/s"}}, Bars: []Bars{{Values: []float64{1, 2}, Color: blue}}}
	if l := short.layout(); l.rotated || l.height != short.Height {
		t.Errorf("two short names: rotated %v, height %v; want side by side in %v", l.rotated, l.height, short.Height)
	}
	long := "gateway-frankfurt-1.example.net"
	var names []string
	var values []float64
	for range 8 {
		names, values = append(names, long), append(values, 1)
	}
	many := Chart{Width: 600, Height: 262, X: Axis{Categories: names}, Bars: []Bars{{Values: values, Color: blue}}}
	l := many.layout()
	if !l.rotated || l.height <= many.Height || l.y1-l.y0 < short.layout().y1-short.layout().y0-1 {
		t.Errorf("eight long names: rotated %v, height %v, plot %v high; want turned, taller than %v, plot as high as with short names", l.rotated, l.height, l.y1-l.y0, many.Height)
	}
	if s := short.layout(); l.x0-l.yTitle > s.x0-s.yTitle+1 {
		t.Errorf("Y title %v left of a plot at %v: want it beside the tick labels, as with short names (%v)", l.yTitle, l.x0, s.x0-s.yTitle)
	}
	svg, err := many.SVG()
	if err != nil {
		t.Fatal(err)
	}
	_, texts := parsed(t, svg)
	if want := long[:maxCategory-1] + "…"; !slices.Contains(texts, want) || !slices.Contains(texts, long) {
		t.Errorf("long name not shortened to %q with the whole name as its title; texts %q", want, texts)
	}
	if !strings.Contains(svg, `transform="rotate(-35 `) {
		t.Error("names not turned")
	}
}
