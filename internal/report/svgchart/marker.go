package svgchart

import "math"

// Marker is the shape drawn at each point of a Line. Filled and outlined
// shapes tell series apart without relying on colour.
type Marker int

// The markers: filled (Circle, Box, Pyramid), outlined on white (Ring,
// Square, Triangle) and strokes (Plus, Cross).
const (
	NoMarker Marker = iota
	Circle
	Ring
	Square
	Box
	Triangle
	Pyramid
	Plus
	Cross
)

// filled says whether the marker is painted in its colour (else stroked).
func (m Marker) filled() bool { return m == Circle || m == Box || m == Pyramid }

// outlined says whether the marker is a closed outline, which gets a white
// inside so the line it sits on does not run through it.
func (m Marker) outlined() bool { return m == Ring || m == Square || m == Triangle }

// draw writes the marker centred on (x, y), r from its centre to its edge,
// inside a group that sets its colour.
func (m Marker) draw(w *writer, x, y, r float64) {
	switch m {
	case Circle, Ring:
		w.printf(`<circle cx="%s" cy="%s" r="%s"/>`, num(x), num(y), num(r))
	case Square, Box:
		// The same area as the circle, so no series looks heavier.
		h := r * math.Sqrt(math.Pi) / 2
		w.printf(`<rect x="%s" y="%s" width="%s" height="%s"/>`, num(x-h), num(y-h), num(2*h), num(2*h))
	case Triangle, Pyramid:
		// Equilateral, centred on its centroid.
		h := r * 1.3
		w.printf(`<path d="M%s %sL%s %sL%s %sZ"/>`, num(x), num(y-h), num(x+h*math.Sqrt(3)/2), num(y+h/2), num(x-h*math.Sqrt(3)/2), num(y+h/2))
	case Plus:
		w.printf(`<path d="M%s %sH%sM%s %sV%s"/>`, num(x-r), num(y), num(x+r), num(x), num(y-r), num(y+r))
	case Cross:
		d := r / math.Sqrt2 * 1.2
		w.printf(`<path d="M%s %sL%s %sM%s %sL%s %s"/>`, num(x-d), num(y-d), num(x+d), num(y+d), num(x-d), num(y+d), num(x+d), num(y-d))
	}
}
