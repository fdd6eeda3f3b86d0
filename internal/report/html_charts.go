package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/wgperf/wgperf/internal/probe/iperf"
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

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

// runStyle picks a run's colour and dashes.
func runStyle(r BenchRun, extra *int) (color.Color, []vg.Length) {
	var c color.Color = colTunnel
	if r.Path == PathUnderlay {
		c = colUnderlay
	}
	if r.Label != "" && r.Label != "before fix" {
		c = colExtra[*extra%len(colExtra)]
		*extra++
	}
	var dash []vg.Length
	if r.Direction == Download {
		dash = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return c, dash
}

// runCharts draws per-second throughput, congestion window and retransmits of
// every run, one line per run.
func runCharts(runs []BenchRun) ([]chart, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	type metric struct {
		title, unit string
		value       func(iperf.Interval) (float64, bool)
	}
	metrics := []metric{
		{"Throughput per second", "Mbit/s", func(iv iperf.Interval) (float64, bool) { return iv.Mbit, true }},
		{"Congestion window (sender, all streams)", "KiB", func(iv iperf.Interval) (float64, bool) {
			if len(iv.Cwnd) == 0 {
				return 0, false
			}
			var sum int64
			for _, c := range iv.Cwnd {
				sum += c
			}
			return float64(sum) / 1024, true
		}},
		{"Retransmits per second", "segments", func(iv iperf.Interval) (float64, bool) {
			return float64(iv.Retransmits), true
		}},
	}
	var out []chart
	for _, m := range metrics {
		p := newPlot(m.title, "seconds", m.unit)
		extra, lines, top := 0, 0, 0.0
		for _, r := range runs {
			if r.Result == nil {
				continue
			}
			var pts plotter.XYs
			for _, iv := range r.Result.Measured() {
				if v, ok := m.value(iv); ok {
					pts = append(pts, plotter.XY{X: iv.End, Y: v})
					top = max(top, v)
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("chart %s: %w", m.title, err)
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
		out = append(out, chart{Title: m.title, SVG: svg})
	}
	return out, nil
}

// mtuChart shows a path-MTU search: each probe's size in the order tried,
// passed in green, lost in red, and the path MTU found.
func mtuChart(m *MTUSearch) (template.HTML, error) {
	p := newPlot("Path-MTU search", "probe", "IP packet size (bytes)")
	p.Y.Min = 0
	var all, ok, fail plotter.XYs
	minSize := m.Steps[0].Size
	for i, s := range m.Steps {
		pt := plotter.XY{X: float64(i + 1), Y: float64(s.Size)}
		all = append(all, pt)
		if s.OK {
			ok = append(ok, pt)
		} else {
			fail = append(fail, pt)
		}
		minSize = min(minSize, s.Size)
	}
	p.Y.Min = float64(minSize) * 0.9
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
	if m.MTU > 0 {
		found, err := plotter.NewLine(plotter.XYs{{X: 1, Y: float64(m.MTU)}, {X: float64(len(m.Steps)), Y: float64(m.MTU)}})
		if err != nil {
			return "", err
		}
		found.Color, found.Dashes = colOK, []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(found)
		p.Legend.Add(fmt.Sprintf("path MTU %d", m.MTU), found)
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
		before[i], after[i], names[i] = s.Before, s.After, s.Name
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
		top = max(top, s.Before, s.After)
	}
	p.Y.Max = top * 1.3 // room for the legend
	p.NominalX(names...)
	height := chartH
	if len(ss) > 6 {
		p.X.Tick.Label.Rotation = 0.6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		height += 2 * vg.Centimeter
	}
	return svgOf(p, chartW, height)
}
