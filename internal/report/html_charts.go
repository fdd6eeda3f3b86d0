package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
)

// Colours tell the path apart, dashes the direction: a reader compares
// tunnel with underlay by colour and upload with download by line style.
var (
	colTunnel   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colUnderlay = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colOK       = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colFail     = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colBefore   = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colAfter    = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	// Extra runs of the same path (labelled, e.g. after a fix) get these.
	colExtra = []color.Color{
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	}
)

const chartW, chartH = 16 * vg.Centimeter, 7 * vg.Centimeter

// minInterval is the shortest iperf3 interval (seconds) the charts plot.
const minInterval = 0.5

// svgOf renders p as an inline <svg> element (no XML prolog).
func svgOf(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("render chart %q: %w", p.Title.Text, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	// Trusted: gonum escapes every text it draws.
	return template.HTML(s), nil
}

// chartFontCSS is an @font-face rule carrying the font gonum measures chart
// text with. Without it a browser that lacks the font substitutes a wider one
// and legends and titles run off the chart. It is added once per page.
var chartFontCSS = sync.OnceValues(func() (template.CSS, error) {
	face := font.DefaultCache.Lookup(plot.DefaultFont, 12)
	var buf sfnt.Buffer
	family, err := face.Face.Name(&buf, sfnt.NameIDFamily)
	if err != nil {
		return "", fmt.Errorf("chart font: %w", err)
	}
	var raw bytes.Buffer
	if _, err := face.Face.WriteSourceTo(&buf, &raw); err != nil {
		return "", fmt.Errorf("chart font: %w", err)
	}
	// Trusted: a quoted family name from the font and base64.
	return template.CSS(fmt.Sprintf("@font-face { font-family: %s; src: url(data:font/ttf;base64,%s) format(\"truetype\"); }",
		strconv.Quote(family), base64.StdEncoding.EncodeToString(raw.Bytes()))), nil
})

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

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min = 0
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

// runStyle picks a run's colour and dashes: before and after a fix in red
// and green, otherwise the tunnel in blue and the underlay in grey; other
// labels get colours of their own. Downloads are dashed.
func runStyle(r BenchRun, extra *int) (color.Color, []vg.Length) {
	var c color.Color
	switch {
	case r.Label == LabelBefore:
		c = colBefore
	case r.Label == LabelAfter:
		c = colAfter
	case r.Label != "":
		c = colExtra[*extra%len(colExtra)]
		*extra++
	case r.Path == PathUnderlay:
		c = colUnderlay
	default:
		c = colTunnel
	}
	var dash []vg.Length
	if r.Direction == Download {
		dash = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return c, dash
}

// chartCaption explains the colours runStyle gave runs.
func chartCaption(runs []BenchRun) string {
	for _, r := range runs {
		if r.Label == LabelBefore || r.Label == LabelAfter {
			return "before the fix in red, after it in green; upload solid, download dashed."
		}
	}
	return "tunnel in blue, underlay in grey; upload solid, download dashed."
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
			p := newPlot(title, "seconds", m.unit)
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
				l, err := plotter.NewLine(pts)
				if err != nil {
					return nil, fmt.Errorf("chart %s: %w", title, err)
				}
				l.Color, l.Dashes = runStyle(r, &extra)
				l.Width = vg.Points(1.5)
				p.Add(l)
				p.Legend.Add(r.Name(), l)
				lines++
			}
			if lines == 0 {
				continue // e.g. no cwnd in UDP runs
			}
			// Headroom above the lines keeps the legend (top right) off them.
			p.Y.Max = max(top, 1) * (1.15 + 0.1*float64(lines))
			svg, err := svgOf(p, chartW, chartH)
			if err != nil {
				return nil, err
			}
			out = append(out, chart{Title: title, Caption: chartCaption(group), SVG: svg})
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
// passed in green, lost in red, and the path MTU found.
func mtuChart(m *mtu.Result) (template.HTML, error) {
	p := newPlot("Path-MTU search", "probe", "IP packet size (bytes)")
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
		return "", err
	}
	path.Color = color.Gray{Y: 0xa0}
	p.Add(path)
	for _, set := range []struct {
		pts   plotter.XYs
		col   color.Color
		shape draw.GlyphDrawer
		name  string
	}{{ok, colOK, draw.CircleGlyph{}, "passed"}, {fail, colFail, draw.CrossGlyph{}, "lost"}} {
		if len(set.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.pts)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: set.col, Radius: vg.Points(4), Shape: set.shape}
		p.Add(sc)
		p.Legend.Add(set.name, sc)
	}
	if m.PathMTU > 0 {
		found, err := plotter.NewLine(plotter.XYs{{X: 1, Y: float64(m.PathMTU)}, {X: float64(len(m.Probes)), Y: float64(m.PathMTU)}})
		if err != nil {
			return "", err
		}
		found.Color, found.Dashes = colOK, []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(found)
		p.Legend.Add(fmt.Sprintf("path MTU %d", m.PathMTU), found)
	}
	p.Legend.Top, p.Legend.Left = false, false
	return svgOf(p, chartW, chartH)
}

// scenarioChart is a grouped bar chart of throughput before and after each fix.
func scenarioChart(ss []ScenarioResult) (template.HTML, error) {
	p := newPlot("Throughput before and after the fix", "", "Mbit/s")
	before, after := make(plotter.Values, len(ss)), make(plotter.Values, len(ss))
	names := make([]string, len(ss))
	for i, s := range ss {
		before[i], after[i], names[i] = s.Before.Tunnel, s.After.Tunnel, s.Name
	}
	w := vg.Points(18)
	for _, set := range []struct {
		vals plotter.Values
		col  color.Color
		name string
		off  vg.Length
	}{{before, colBefore, "before", -w / 2}, {after, colAfter, "after", w / 2}} {
		bars, err := plotter.NewBarChart(set.vals, w)
		if err != nil {
			return "", err
		}
		bars.Color, bars.LineStyle.Width, bars.Offset = set.col, 0, set.off
		p.Add(bars)
		p.Legend.Add(set.name, bars)
	}
	top := 1.0
	for _, s := range ss {
		top = max(top, s.Before.Tunnel, s.After.Tunnel)
	}
	p.Y.Max = top * 1.3 // room for the legend
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(ss))-0.5 // whole bars at both ends
	height := chartH
	if len(ss) > 6 {
		p.X.Tick.Label.Rotation = 0.6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		height += 2 * vg.Centimeter
	}
	return svgOf(p, chartW, height)
}
