package report

import (
	"fmt"
	"html/template"

	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/report/svgchart"
)

// The palette is Okabe and Ito's, which people with the common colour-vision
// deficiencies tell apart; every series also differs by marker shape (and
// bars by fill), so nothing depends on colour alone. Colour tells the path
// (or before/after a fix) apart, dashes the direction.
const (
	colTunnel   = "#0072b2" // blue
	colUnderlay = "#555555" // dark grey
	colOK       = "#009e73" // bluish green
	colFail     = "#d55e00" // vermillion
	colBefore   = "#d55e00" // vermillion
	colAfter    = "#0072b2" // blue
	colProbes   = "#a0a0a0" // light grey: the order the MTU probes were tried in
)

// colExtra are for extra runs of the same path (labelled, e.g. after a fix):
// orange, reddish purple, sky blue, bluish green, black.
var colExtra = []string{"#e69f00", "#cc79a7", "#56b4e9", "#009e73", "#000000"}

// shape is a marker, with the character the HTML legend shows for it.
type shape struct {
	marker svgchart.Marker
	char   string
}

var (
	shapeCircle   = shape{svgchart.Circle, "●"}
	shapeTriangle = shape{svgchart.Triangle, "△"}
	shapeSquare   = shape{svgchart.Square, "□"}
	shapeCross    = shape{svgchart.Cross, "✕"}
	shapeExtra    = []shape{{svgchart.Ring, "○"}, {svgchart.Plus, "+"}, {svgchart.Box, "■"}, {svgchart.Pyramid, "▲"}, {svgchart.Cross, "✕"}}
)

// The charts' size in CSS pixels (the page scales them to its width), their
// lines' width and their markers' radius.
const (
	chartW, chartH = 600, 262
	lineWidth      = 2
	markerRadius   = 3.5
	mtuMarker      = 5
)

// minInterval is the shortest iperf3 interval (seconds) the charts plot.
const minInterval = 0.5

// newChart is a chart without legend (the legend list under it is HTML),
// named title for screen readers, in the page's fonts.
func newChart(title, x, y string) svgchart.Chart {
	return svgchart.Chart{Title: title, XLabel: x, YLabel: y, Width: chartW, Height: chartH, FontFamily: chartFonts}
}

// chartHTML is c's SVG for the page: trusted HTML, as svgchart escapes
// every text it writes.
func chartHTML(c svgchart.Chart) (template.HTML, error) {
	svg, err := c.SVG()
	return template.HTML(svg), err
}

// runStyle picks a run's colour, marker and dashes: before a fix vermillion
// circles, after it blue triangles; otherwise the tunnel blue circles and the
// underlay grey squares; other labels get colours and shapes of their own.
// Downloads are dashed.
func runStyle(r BenchRun, extra *int) (string, shape, bool) {
	var c string
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
	return c, sh, r.Direction == Download
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
			c := newChart(title, "seconds", m.unit)
			var legend []legendEntry
			extra, top := 0, 0.0
			for _, r := range group {
				var pts []svgchart.Point
				for _, iv := range chartIntervals(r.Result) {
					if v, ok := m.value(r.Result, iv); ok {
						pts = append(pts, svgchart.Point{X: iv.End, Y: v})
						top = max(top, v)
					}
				}
				if len(pts) == 0 {
					continue
				}
				col, sh, dashed := runStyle(r, &extra)
				c.Lines = append(c.Lines, svgchart.Line{Points: pts, Color: col, Width: lineWidth, Dashed: dashed, Marker: sh.marker, MarkerRadius: markerRadius})
				legend = append(legend, legendEntry{Name: r.Name(), Color: col, Line: true, Dashed: dashed, Marker: sh.char})
			}
			if len(c.Lines) == 0 {
				continue // e.g. no cwnd in UDP runs
			}
			c.Y.Max = max(top, 1) * 1.05
			svg, err := chartHTML(c)
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
	c := newChart("Path-MTU search: DF probe sizes in the order tried", "probe", "IP packet size (bytes)")
	var all, ok, fail []svgchart.Point
	lo, hi := m.Probes[0].MTU, m.Probes[0].MTU
	for i, pr := range m.Probes {
		pt := svgchart.Point{X: float64(i + 1), Y: float64(pr.MTU)}
		all = append(all, pt)
		if pr.Passed {
			ok = append(ok, pt)
		} else {
			fail = append(fail, pt)
		}
		lo, hi = min(lo, pr.MTU), max(hi, pr.MTU)
	}
	c.Y.Min = float64(lo) * 0.9
	c.Y.Max = float64(hi) + (float64(hi)-c.Y.Min)*0.05 // the largest probe's mark whole
	// Half a probe of room on each side keeps the first and last marks whole.
	c.X.Min, c.X.Max, c.X.Whole = 0.5, float64(len(m.Probes))+0.5, true
	c.Lines = append(c.Lines, svgchart.Line{Points: all, Color: colProbes, Width: 1})
	var legend []legendEntry
	for _, set := range []struct {
		pts   []svgchart.Point
		col   string
		shape shape
		name  string
	}{{ok, colOK, shapeCircle, "passed"}, {fail, colFail, shapeCross, "lost"}} {
		if len(set.pts) == 0 {
			continue
		}
		c.Lines = append(c.Lines, svgchart.Line{Points: set.pts, Color: set.col, Marker: set.shape.marker, MarkerRadius: mtuMarker})
		legend = append(legend, legendEntry{Name: set.name, Color: set.col, Marker: set.shape.char})
	}
	if m.PathMTU > 0 {
		found := []svgchart.Point{{X: 1, Y: float64(m.PathMTU)}, {X: float64(len(m.Probes)), Y: float64(m.PathMTU)}}
		c.Lines = append(c.Lines, svgchart.Line{Points: found, Color: colTunnel, Width: 1.5, Dashed: true})
		legend = append(legend, legendEntry{Name: fmt.Sprintf("path MTU %d", m.PathMTU), Color: colTunnel, Line: true, Dashed: true})
	}
	svg, err := chartHTML(c)
	return svg, legend, err
}

// barChart draws grouped bars: one group per name, one bar per set in each
// (an outlined set vermillion, a filled one blue), labelled for screen readers
// with title. A unit that counts (counted) gets whole-number ticks.
func barChart(title, unit string, counted bool, names []string, sets []barSet) (template.HTML, []legendEntry, error) {
	c := newChart(title, "", unit)
	c.X.Categories, c.Y.Whole = names, counted
	var legend []legendEntry
	top := 1.0
	for _, set := range sets {
		col := colAfter
		if set.Hollow {
			col = colBefore
		}
		c.Bars = append(c.Bars, svgchart.Bars{Values: set.Values, Color: col, Hollow: set.Hollow})
		legend = append(legend, legendEntry{Name: set.Name, Color: col, Hollow: set.Hollow})
		for _, v := range set.Values {
			top = max(top, v)
		}
	}
	c.Y.Max = top * 1.05
	svg, err := chartHTML(c)
	return svg, legend, err
}
