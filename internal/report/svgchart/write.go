package svgchart

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// writer accumulates the SVG text.
type writer struct{ strings.Builder }

func (w *writer) printf(format string, args ...any) { fmt.Fprintf(&w.Builder, format, args...) }

// esc XML-escapes s for text and attribute values alike: <, >, &, both
// quotes and line breaks become references, and characters XML cannot hold
// (control characters) become U+FFFD, so no text turns into markup.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// num writes a coordinate to a tenth of a pixel, without trailing zeros.
func num(v float64) string {
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // not "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
