//go:build !router

package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
)

// The palette is Okabe and Ito's, which people with the common colour-vision
// deficiencies tell apart; every series also differs by marker shape (and
// bars by fill), so nothing depends on colour alone. Colour tells the path
// (or before/after a fix) apart, dashes the direction.
var (
	colTunnel   = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff} // blue
	colUnderlay = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff} // dark grey
	colOK       = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff} // bluish green
	colFail     = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff} // vermillion
	colBefore   = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff} // vermillion
	colAfter    = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff} // blue
	// Extra runs of the same path (labelled, e.g. after a fix) get these.
	colExtra = []color.Color{
		color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
		color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
		color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
		color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
		color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xff}, // black
	}
)

// shape is a marker, with the character the HTML legend shows for it.
type shape struct {
	glyph draw.GlyphDrawer
	char  string
}

var (
	shapeCircle   = shape{draw.CircleGlyph{}, "●"}
	shapeTriangle = shape{draw.TriangleGlyph{}, "△"}
	shapeSquare   = shape{draw.SquareGlyph{}, "□"}
	shapeCross    = shape{draw.CrossGlyph{}, "✕"}
	shapeExtra    = []shape{{draw.RingGlyph{}, "○"}, {draw.PlusGlyph{}, "+"}, {draw.BoxGlyph{}, "■"}, {draw.PyramidGlyph{}, "▲"}, {draw.CrossGlyph{}, "✕"}}
)

func cssColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

const chartW, chartH = 16 * vg.Centimeter, 7 * vg.Centimeter

// minInterval is the shortest iperf3 interval (seconds) the charts plot.
const minInterval = 0.5

// svgOf renders p as an inline <svg> element (no XML prolog), labelled for
// screen readers with label (role img, aria-label, title), its text in the
// page's fonts.
func svgOf(p *plot.Plot, w, h vg.Length, label string) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("render chart %q: %w", label, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = strings.ReplaceAll(s, "font-family:"+measureFamily+";", "font-family:"+strings.ReplaceAll(chartFonts, `"`, "'")+";")
	esc := template.HTMLEscapeString(label)
	s = strings.Replace(s, "<svg", `<svg role="img" aria-label="`+esc+`"`, 1)
	if i := strings.Index(s, ">"); i >= 0 {
		s = s[:i+1] + "<title>" + esc + "</title>" + s[i+1:]
	}
	// Trusted: gonum escapes every text it draws; the label is escaped here.
	return template.HTML(s), nil
}

// chartFont is the font chart text is measured with (see chartFonts), and
// measureFamily the family name gonum writes for it.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

const measureFamily = "Liberation Sans"

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("1500", not "1500.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if strings.Contains(ts[i].Label, ".") {
			ts[i].Label = strings.TrimRight(strings.TrimRight(ts[i].Label, "0"), ".")
		}
	}
	return ts
}

// countTicks label whole numbers only, for axes that count (probe 1, 2, 3...).
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	step := math.Max(1, math.Ceil((max-min)/10))
	var ts []plot.Tick
	for v := math.Ceil(min); v <= max; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ts
}

// newPlot is a plot without title or legend: both are HTML around the
// chart (the figure caption and the legend list).
func newPlot(x, y string) *plot.Plot {
	p := plot.New()
	for _, ts := range []*text.Style{&p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label} {
		size := ts.Font.Size
		ts.Font = chartFont
		ts.Font.Size = size
	}
	p.X.Label.Text = x
	p.Y.Label.Text = y
	// Room for a fallback font a little wider than the one measured.
	p.Y.Label.Padding += vg.Points(3)
	p.Y.Min = 0
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// runStyle picks a run's colour, marker and dashes: before a fix vermillion
// circles, after it blue triangles; otherwise the tunnel blue circles and the
// underlay grey squares; other labels get colours and shapes of their own.
// Downloads are dashed.
func runStyle(r BenchRun, extra *int) (color.Color, shape, []vg.Length) {
	var c color.Color
	var sh shape
	switch {
	case r.Label == LabelBefore:
		c, sh = colBefore, shapeCircle
	case r.Label == LabelAfter:
		c, sh = colAfter, shapeTriangle
	case r.Label != "":
		c, sh = colExtra[*extra%len(colExtra)], shapeExtra[*extra%len(shapeExtra)]
		*extra++
	case r.Path == PathUnderlay:
		c, sh = colUnderlay, shapeSquare
	default:
		c, sh = colTunnel, shapeCircle
	}
	var dash []vg.Length
	if r.Direction == Download {
		dash = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return c, sh, dash
}

// chartCaption explains the styles runStyle gave runs.
func chartCaption(runs []BenchRun) string {
	for _, r := range runs {
		if r.Label == LabelBefore || r.Label == LabelAfter {
			return "before the fix vermillion circles, after it blue triangles (outlined); upload solid, download dashed."
		}
	}
	for _, r := range runs {
		if r.Label != "" {
			return "one line per run, each in its own colour and marker (listed below the chart); upload solid, download dashed."
		}
	}
	return "tunnel blue circles, underlay grey squares (outlined); upload solid, download dashed."
}

// runCharts draws per-second throughput, congestion window and retransmits,
// one line per run and one set of charts per kind of run (1 stream, N
// streams, UDP), each title starting with prefix.
func runCharts(runs []BenchRun, prefix string) ([]chart, error) {
	type metric struct {
		title, unit string
		value       func(*iperf.Result, iperf.Interval) (float64, bool)
	}
	metrics := []metric{
		{"throughput per second", "Mbit/s", func(_ *iperf.Result, iv iperf.Interval) (float64, bool) { return iv.Mbit, true }},
		{"congestion window (sender, all streams)", "KiB", func(_ *iperf.Result, iv iperf.Interval) (float64, bool) {
			if len(iv.Cwnd) == 0 {
				return 0, false
			}
			var sum int64
			for _, c := range iv.Cwnd {
				sum += c
			}
			return float64(sum) / 1024, true
		}},
		{"retransmits per second", "segments", func(r *iperf.Result, iv iperf.Interval) (float64, bool) {
			return float64(iv.Retransmits), r.Protocol != "udp"
		}},
	}
	var kinds []string
	byKind := map[string][]BenchRun{}
	for _, r := range runs {
		if r.Result == nil {
			continue
		}
		k := r.Kind()
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], r)
	}
	var out []chart
	for _, kind := range kinds {
		group := byKind[kind]
		for _, m := range metrics {
			title := prefix + kind + ", " + m.title
			p := newPlot("seconds", m.unit)
			var legend []legendEntry
			extra, lines, top := 0, 0, 0.0
			for _, r := range group {
				var pts plotter.XYs
				for _, iv := range chartIntervals(r.Result) {
					if v, ok := m.value(r.Result, iv); ok {
						pts = append(pts, plotter.XY{X: iv.End, Y: v})
						top = max(top, v)
					}
				}
				if len(pts) == 0 {
					continue
				}
				l, marks, err := plotter.NewLinePoints(pts)
				if err != nil {
					return nil, fmt.Errorf("chart %s: %w", title, err)
				}
				col, sh, dash := runStyle(r, &extra)
				l.Color, l.Dashes, l.Width = col, dash, vg.Points(1.5)
				marks.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: sh.glyph}
				p.Add(l, marks)
				legend = append(legend, legendEntry{Name: r.Name(), Color: cssColor(col), Line: true, Dashed: dash != nil, Marker: sh.char})
				lines++
			}
			if lines == 0 {
				continue // e.g. no cwnd in UDP runs
			}
			p.Y.Max = max(top, 1) * 1.05
			svg, err := svgOf(p, chartW, chartH, title)
			if err != nil {
				return nil, err
			}
			out = append(out, chart{Title: title, Caption: chartCaption(group), SVG: svg, Legend: legend})
		}
	}
	return out, nil
}

// chartIntervals are the measured intervals of res worth a point: iperf3 may
// end a run with a sliver of an interval whose rate is noise.
func chartIntervals(res *iperf.Result) []iperf.Interval {
	var out []iperf.Interval
	for _, iv := range res.Measured() {
		if iv.End-iv.Start >= minInterval {
			out = append(out, iv)
		}
	}
	return out
}

// mtuChart shows a path-MTU search: each DF probe's size in the order tried,
// passed as bluish-green circles, lost as vermillion crosses, and the path MTU found.
func mtuChart(m *mtu.Result) (template.HTML, []legendEntry, error) {
	p := newPlot("probe", "IP packet size (bytes)")
	var legend []legendEntry
	var all, ok, fail plotter.XYs
	minSize := m.Probes[0].MTU
	for i, pr := range m.Probes {
		pt := plotter.XY{X: float64(i + 1), Y: float64(pr.MTU)}
		all = append(all, pt)
		if pr.Passed {
			ok = append(ok, pt)
		} else {
			fail = append(fail, pt)
		}
		minSize = min(minSize, pr.MTU)
	}
	p.Y.Min = float64(minSize) * 0.9
	// Half a probe of room on each side keeps the first and last marks whole.
	p.X.Min, p.X.Max = 0.5, float64(len(m.Probes))+0.5
	p.X.Tick.Marker = countTicks{}
	path, err := plotter.NewLine(all)
	if err != nil {
		return "", nil, err
	}
	path.Color = color.Gray{Y: 0xa0}
	p.Add(path)
	for _, set := range []struct {
		pts   plotter.XYs
		col   color.Color
		shape shape
		name  string
	}{{ok, colOK, shapeCircle, "passed"}, {fail, colFail, shapeCross, "lost"}} {
		if len(set.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.pts)
		if err != nil {
			return "", nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: set.col, Radius: vg.Points(4), Shape: set.shape.glyph}
		p.Add(sc)
		legend = append(legend, legendEntry{Name: set.name, Color: cssColor(set.col), Marker: set.shape.char})
	}
	if m.PathMTU > 0 {
		found, err := plotter.NewLine(plotter.XYs{{X: 1, Y: float64(m.PathMTU)}, {X: float64(len(m.Probes)), Y: float64(m.PathMTU)}})
		if err != nil {
			return "", nil, err
		}
		found.Color, found.Dashes = colTunnel, []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(found)
		legend = append(legend, legendEntry{Name: fmt.Sprintf("path MTU %d", m.PathMTU), Color: cssColor(colTunnel), Line: true, Dashed: true})
	}
	svg, err := svgOf(p, chartW, chartH, "Path-MTU search: DF probe sizes in the order tried")
	return svg, legend, err
}

// barChart draws grouped bars: one group per name, one bar per set in each
// (an outlined set vermillion, a filled one blue), labelled for screen readers
// with title. A unit that counts (counted) gets whole-number ticks.
func barChart(title, unit string, counted bool, names []string, sets []barSet) (template.HTML, []legendEntry, error) {
	p := newPlot("", unit)
	if counted {
		p.Y.Tick.Marker = countTicks{}
	}
	var legend []legendEntry
	w := vg.Points(18)
	top := 1.0
	for i, set := range sets {
		bars, err := plotter.NewBarChart(plotter.Values(set.Values), w)
		if err != nil {
			return "", nil, err
		}
		bars.Offset = w * vg.Length(float64(i)-float64(len(sets)-1)/2)
		col := colAfter
		if set.Hollow {
			col = colBefore
		}
		bars.LineStyle.Color, bars.LineStyle.Width = col, vg.Points(1.5)
		bars.Color = col
		if set.Hollow {
			bars.Color = color.White
		}
		p.Add(bars)
		legend = append(legend, legendEntry{Name: set.Name, Color: cssColor(col), Hollow: set.Hollow})
		for _, v := range set.Values {
			top = max(top, v)
		}
	}
	p.Y.Max = top * 1.05
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5 // whole bars at both ends
	height := chartH
	if len(names) > 6 {
		p.X.Tick.Label.Rotation = 0.6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		height += 2 * vg.Centimeter
	}
	svg, err := svgOf(p, chartW, height, title)
	return svg, legend, err
}
