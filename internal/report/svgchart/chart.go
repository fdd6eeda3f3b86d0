// Package svgchart draws the HTML report's charts as small inline SVG: line
// charts (series of points, with markers and dashes) and grouped bar charts,
// on axes with round ticks and a grid. It needs no font: text is laid out
// from an estimate of its width (see textWidth) and drawn in the page's own
// font stack. Every text put into the SVG — titles, labels, category names,
// which may come from hosts — is XML-escaped, so none becomes markup. The
// legend is the caller's, outside the chart.
package svgchart

import (
	"errors"
	"fmt"
	"math"
)

// Chart is one chart: lines over a numeric X axis, or bars, one group per
// X.Categories entry.
type Chart struct {
	// Title names the chart for screen readers (aria-label and <title>).
	Title          string
	XLabel, YLabel string
	// Width and Height are the drawing's size in CSS pixels (its viewBox);
	// rotated category names add to Height.
	Width, Height float64
	// FontFamily is a CSS font stack for the chart's text.
	FontFamily string
	X, Y       Axis
	Lines      []Line
	Bars       []Bars // one per series, a value per category
}

// Axis is the range and ticks of one axis.
type Axis struct {
	// Min and Max are the range shown; with Max <= Min it fits the data.
	Min, Max float64
	// Whole puts ticks on whole numbers only, for an axis that counts.
	Whole bool
	// Categories name the bar groups along X, in order.
	Categories []string
}

// Point is one data point.
type Point struct{ X, Y float64 }

// Line is one series of points, joined by a line of Width (none when 0),
// with a Marker of MarkerRadius at each point.
type Line struct {
	Points       []Point
	Color        string // #rrggbb
	Width        float64
	Dashed       bool
	Marker       Marker
	MarkerRadius float64
}

// Bars is one series of a grouped bar chart: filled, or outlined on white
// (Hollow). A zero value is drawn as a flat bar, so it reads as measured.
type Bars struct {
	Values []float64
	Color  string // #rrggbb
	Hollow bool
}

// SVG renders the chart as one <svg> element (no XML prolog), ready to be
// put inline in an HTML page.
func (c Chart) SVG() (string, error) {
	if err := c.validate(); err != nil {
		return "", fmt.Errorf("chart %q: %w", c.Title, err)
	}
	l := c.layout()
	w := &writer{}
	w.printf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s" font-family="%s" font-size="%s">`,
		num(c.Width), num(l.height), num(c.Width), num(l.height), esc(c.Title), esc(c.FontFamily), num(tickFont))
	w.printf(`<title>%s</title>`, esc(c.Title))
	l.grid(w)
	l.axisLines(w)
	for _, b := range c.barRects(l) {
		w.printf(`<path d="%s" fill="%s" stroke="%s" stroke-width="1.5"/>`, b.path(), esc(b.fill), esc(b.color))
	}
	for _, ln := range c.Lines {
		l.line(w, ln)
	}
	for _, ln := range c.Lines {
		l.markers(w, ln)
	}
	l.axisText(w, c)
	w.printf(`</svg>`)
	return w.String(), nil
}

// validate refuses what would draw a wrong chart: bars that do not match
// their categories, colours that are not #rrggbb.
func (c Chart) validate() error {
	if !(c.Width > 0 && c.Height > 0) {
		return errors.New("no size")
	}
	if len(c.Bars) > 0 && len(c.Lines) > 0 {
		return errors.New("bars and lines in one chart")
	}
	for _, b := range c.Bars {
		if len(b.Values) != len(c.X.Categories) {
			return fmt.Errorf("%d bar values for %d categories", len(b.Values), len(c.X.Categories))
		}
		if !isColor(b.Color) {
			return fmt.Errorf("bar colour %q is not #rrggbb", b.Color)
		}
	}
	for _, ln := range c.Lines {
		if !isColor(ln.Color) {
			return fmt.Errorf("line colour %q is not #rrggbb", ln.Color)
		}
	}
	return nil
}

// isColor accepts #rrggbb.
func isColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, r := range s[1:] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// ranges are the X and Y ranges drawn: the axes' own, or the data's extent
// (the bar charts' Y from 0).
func (c Chart) ranges() (x, y [2]float64) {
	x, y = [2]float64{c.X.Min, c.X.Max}, [2]float64{c.Y.Min, c.Y.Max}
	lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, ln := range c.Lines {
		for _, p := range ln.Points {
			if finite(p) {
				lo[0], hi[0] = min(lo[0], p.X), max(hi[0], p.X)
				lo[1], hi[1] = min(lo[1], p.Y), max(hi[1], p.Y)
			}
		}
	}
	if len(c.Bars) > 0 {
		lo[1], hi[1] = 0, 0
		for _, b := range c.Bars {
			for _, v := range b.Values {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lo[1], hi[1] = min(lo[1], v), max(hi[1], v)
				}
			}
		}
		lo[0], hi[0] = -0.5, float64(len(c.X.Categories))-0.5
	}
	fit := func(r [2]float64, lo, hi float64) [2]float64 {
		if r[1] > r[0] {
			return r
		}
		if math.IsInf(lo, 0) {
			return [2]float64{0, 1} // no data: an empty frame
		}
		if hi <= lo { // one value: centre it
			return [2]float64{lo - 0.5, hi + 0.5}
		}
		return [2]float64{lo, hi}
	}
	return fit(x, lo[0], hi[0]), fit(y, lo[1], hi[1])
}

func finite(p Point) bool {
	return !math.IsNaN(p.X) && !math.IsNaN(p.Y) && !math.IsInf(p.X, 0) && !math.IsInf(p.Y, 0)
}
