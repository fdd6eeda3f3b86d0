package svgchart

import (
	"math"
	"strings"
	"unicode/utf8"
)

// Text sizes and spacing, in the drawing's pixels.
const (
	tickFont  = 12.0
	labelFont = 13.0
	tickLen   = 5.0
	gap       = 4.0
	// rotation is how far category names turn when they do not fit side by
	// side; maxCategory is the most runes of one shown (a host's name may be
	// long: the full name is its tooltip).
	rotation    = 35.0
	maxCategory = 24
)

// textWidth estimates how wide s is in a sans-serif font of size: Arial's
// (and Liberation Sans') digits are 0.556 em, most lower-case letters less;
// 0.6 em leaves room for a fallback font a little wider.
func textWidth(s string, size float64) float64 {
	return 0.6 * size * float64(utf8.RuneCountInString(s))
}

// layout is where the plot area sits and what goes around it.
type layout struct {
	x0, x1, y0, y1 float64 // the plot area: left, right, top, bottom
	height         float64 // the whole drawing's
	xr, yr         [2]float64
	xTicks, yTicks []Tick
	categories     []string // shortened category names
	rotated        bool     // category names are turned by rotation
	yTitle         float64  // the Y axis title's baseline (turned, it is an x)
}

func (c Chart) layout() layout {
	var l layout
	l.xr, l.yr = c.ranges()
	l.yTicks = Ticks(l.yr[0], l.yr[1], c.Y.Whole)
	if len(c.X.Categories) == 0 {
		l.xTicks = Ticks(l.xr[0], l.xr[1], c.X.Whole)
	}
	widest := 0.0
	for _, t := range l.yTicks {
		widest = max(widest, textWidth(t.Label, tickFont))
	}
	// Left to right: the Y title, its space, the tick labels, the ticks.
	yLabels := 2*gap + widest + gap + tickLen
	l.x0 = gap + labelFont + yLabels
	l.x1 = c.Width - gap
	if n := len(l.xTicks); n > 0 && l.xTicks[n-1].Value >= l.xr[1]-(l.xr[1]-l.xr[0])*0.01 {
		// The last tick's label is centred on the right edge.
		l.x1 = c.Width - max(gap, textWidth(l.xTicks[n-1].Label, tickFont)/2+2)
	}
	for _, name := range c.X.Categories {
		l.categories = append(l.categories, shorten(name, maxCategory))
	}
	// Below the plot: the tick labels, then the axis title.
	below := tickLen + gap + tickFont
	nominal := below
	if len(l.categories) > 0 {
		slot := (l.x1 - l.x0) / float64(len(l.categories))
		longest := 0.0
		for _, name := range l.categories {
			longest = max(longest, textWidth(name, tickFont))
		}
		if longest > slot-gap {
			l.rotated = true
			sin, cos := math.Sincos(rotation * math.Pi / 180)
			// The first name reaches left of its slot: keep it inside the drawing.
			l.x0 = max(l.x0, longest*cos-slot/2+gap)
			below = tickLen + gap + longest*sin + tickFont*cos
		}
	}
	if c.XLabel != "" {
		below += gap + 2 + labelFont
		nominal += gap + 2 + labelFont
	}
	// Turned names make the drawing taller, not the plot smaller.
	l.height = c.Height + max(0, below-nominal)
	top := gap + tickFont/2
	l.y0, l.y1 = top, l.height-below-gap
	// Beside the tick labels, also when turned names pushed the plot right.
	l.yTitle = l.x0 - yLabels - labelFont*0.2
	return l
}

// shorten keeps the first n runes of s, marking a cut with an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// sx and sy map data to the drawing's coordinates.
func (l layout) sx(v float64) float64 {
	return l.x0 + (v-l.xr[0])/(l.xr[1]-l.xr[0])*(l.x1-l.x0)
}

func (l layout) sy(v float64) float64 {
	return l.y1 - (v-l.yr[0])/(l.yr[1]-l.yr[0])*(l.y1-l.y0)
}

// grid draws light lines at the ticks, under the data.
func (l layout) grid(w *writer) {
	var d strings.Builder
	for _, t := range l.yTicks {
		d.WriteString("M" + num(l.x0) + " " + num(l.sy(t.Value)) + "H" + num(l.x1))
	}
	for _, t := range l.xTicks {
		d.WriteString("M" + num(l.sx(t.Value)) + " " + num(l.y0) + "V" + num(l.y1))
	}
	if d.Len() > 0 {
		w.printf(`<path d="%s" stroke="#dddddd" stroke-width="1" fill="none"/>`, d.String())
	}
}

// line joins a series' points.
func (l layout) line(w *writer, ln Line) {
	if ln.Width <= 0 {
		return
	}
	var pts []string
	for _, p := range ln.Points {
		if finite(p) {
			pts = append(pts, num(l.sx(p.X))+","+num(l.sy(p.Y)))
		}
	}
	if len(pts) < 2 {
		return
	}
	dash := ""
	if ln.Dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	w.printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"%s/>`,
		strings.Join(pts, " "), esc(ln.Color), num(ln.Width), dash)
}

// markers draws a series' markers, in one group that carries their colour.
func (l layout) markers(w *writer, ln Line) {
	if ln.Marker == NoMarker || ln.MarkerRadius <= 0 {
		return
	}
	switch {
	case ln.Marker.filled():
		w.printf(`<g fill="%s">`, esc(ln.Color))
	case ln.Marker.outlined():
		w.printf(`<g fill="#ffffff" stroke="%s" stroke-width="1.5">`, esc(ln.Color))
	default:
		w.printf(`<g fill="none" stroke="%s" stroke-width="2">`, esc(ln.Color))
	}
	for _, p := range ln.Points {
		if finite(p) {
			ln.Marker.draw(w, l.sx(p.X), l.sy(p.Y), ln.MarkerRadius)
		}
	}
	w.printf(`</g>`)
}

// bar is one bar: its left edge and width, top and base, and its paint.
type bar struct {
	left, width, top, base float64
	fill, color            string
}

// path outlines the bar: a path, not a rect, so a flat bar (a zero) still
// draws its stroke.
func (b bar) path() string {
	return "M" + num(b.left) + " " + num(b.base) + "V" + num(b.top) + "H" + num(b.left+b.width) + "V" + num(b.base) + "Z"
}

// barRects places each series' bar side by side in its category's slot.
func (c Chart) barRects(l layout) []bar {
	if len(c.Bars) == 0 || len(c.X.Categories) == 0 {
		return nil
	}
	slot := (l.x1 - l.x0) / float64(len(c.X.Categories))
	group := min(slot*0.7, 40*float64(len(c.Bars)))
	width := group / float64(len(c.Bars))
	base := l.sy(max(0, l.yr[0]))
	var out []bar
	for j, b := range c.Bars {
		fill := b.Color
		if b.Hollow {
			fill = "#ffffff"
		}
		for i, v := range b.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			// A pixel apart from its neighbours, so two bars never merge.
			left := l.sx(float64(i)) - group/2 + float64(j)*width + 1
			top, bottom := min(base, l.sy(v)), max(base, l.sy(v))
			out = append(out, bar{left: left, width: width - 2, top: top, base: bottom, fill: fill, color: b.Color})
		}
	}
	return out
}

// axisLines draws the axis lines and ticks, under the data: a zero bar's
// colour shows on the X axis.
func (l layout) axisLines(w *writer) {
	var d strings.Builder
	d.WriteString("M" + num(l.x0) + " " + num(l.y0) + "V" + num(l.y1) + "H" + num(l.x1))
	for _, t := range l.yTicks {
		d.WriteString("M" + num(l.x0-tickLen) + " " + num(l.sy(t.Value)) + "h" + num(tickLen))
	}
	for _, t := range l.xTicks {
		d.WriteString("M" + num(l.sx(t.Value)) + " " + num(l.y1) + "v" + num(tickLen))
	}
	for i := range l.categories {
		d.WriteString("M" + num(l.sx(float64(i))) + " " + num(l.y1) + "v" + num(tickLen))
	}
	w.printf(`<path d="%s" stroke="#333333" stroke-width="1" fill="none"/>`, d.String())
}

// axisText writes the tick labels and the axis titles.
func (l layout) axisText(w *writer, c Chart) {
	w.printf(`<g fill="#222222">`)
	for _, t := range l.yTicks {
		w.printf(`<text x="%s" y="%s" text-anchor="end">%s</text>`, num(l.x0-tickLen-gap), num(l.sy(t.Value)+tickFont*0.35), esc(t.Label))
	}
	under := l.y1 + tickLen + gap + tickFont*0.8
	for _, t := range l.xTicks {
		w.printf(`<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(l.sx(t.Value)), num(under), esc(t.Label))
	}
	for i, name := range l.categories {
		x := l.sx(float64(i))
		tip := ""
		if name != c.X.Categories[i] {
			tip = "<title>" + esc(c.X.Categories[i]) + "</title>"
		}
		if l.rotated {
			w.printf(`<text x="%s" y="%s" text-anchor="end" transform="rotate(-%s %s %s)">%s%s</text>`,
				num(x), num(under), num(rotation), num(x), num(under), tip, esc(name))
		} else {
			w.printf(`<text x="%s" y="%s" text-anchor="middle">%s%s</text>`, num(x), num(under), tip, esc(name))
		}
	}
	if c.XLabel != "" {
		w.printf(`<text x="%s" y="%s" text-anchor="middle" font-size="%s">%s</text>`,
			num((l.x0+l.x1)/2), num(l.height-gap-labelFont*0.2), num(labelFont), esc(c.XLabel))
	}
	if c.YLabel != "" {
		x, y := l.yTitle, (l.y0+l.y1)/2
		w.printf(`<text x="%s" y="%s" text-anchor="middle" font-size="%s" transform="rotate(-90 %s %s)">%s</text>`,
			num(x), num(y), num(labelFont), num(x), num(y), esc(c.YLabel))
	}
	w.printf(`</g>`)
}
