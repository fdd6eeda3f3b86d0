package exporter

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Prometheus text exposition format (version 0.0.4), written here rather
// than with client_golang: the exporter only ever serves constant samples
// gathered once per collection, and the library with its protobuf model was
// a third of the router build. Every build serves through this one writer.

// contentType is what a scrape is answered with.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// metricType is a family's TYPE.
type metricType int

const (
	gauge metricType = iota
	counter
)

func (t metricType) String() string {
	if t == counter {
		return "counter"
	}
	return "gauge"
}

// Desc describes one metric family: its name, help and label names.
type Desc struct {
	name, help string
	labels     []string
	order      []int // label indexes by label name: the order they are written in
}

func newDesc(name, help string, labels ...string) *Desc {
	d := &Desc{name: name, help: help, labels: labels, order: make([]int, len(labels))}
	for i := range d.order {
		d.order[i] = i
	}
	slices.SortFunc(d.order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return d
}

// Name is the metric's name.
func (d *Desc) Name() string { return d.name }

// metric is one sample: a value with its label values, in the Desc's label order.
type metric struct {
	desc   *Desc
	typ    metricType
	value  float64
	labels []string
}

// constMetric is one sample; a label count that does not match the Desc is a
// bug in the caller and panics.
func constMetric(d *Desc, t metricType, v float64, labels ...string) metric {
	if len(labels) != len(d.labels) {
		panic(fmt.Sprintf("metric %s: %d label values for %d labels", d.name, len(labels), len(d.labels)))
	}
	return metric{desc: d, typ: t, value: v, labels: labels}
}

// family is one metric name's samples, rendered in the text format.
type family struct {
	name string
	text []byte
}

// gather sorts samples into families by name, checks that no series repeats
// and that a name has one meaning, and renders each family. Samples within a
// family are ordered by their label values taken in label-name order.
func gather(ms []metric) ([]family, error) { return gatherWithin(ms, 0) }

// gatherWithin is gather rendering at most maxBytes of text (0: no bound);
// past it, it stops with bytesError.
func gatherWithin(ms []metric, maxBytes int) ([]family, error) {
	byName := map[string][]metric{}
	for _, m := range ms {
		n := m.desc.name
		if prev := byName[n]; len(prev) > 0 && (prev[0].desc.help != m.desc.help || prev[0].typ != m.typ ||
			!slices.Equal(prev[0].desc.labels, m.desc.labels)) {
			return nil, fmt.Errorf("metric %s is described twice, differently", n)
		}
		byName[n] = append(byName[n], m)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]family, 0, len(names))
	left := maxBytes
	for _, n := range names {
		samples := byName[n]
		order := samples[0].desc.order
		cmp := func(a, b metric) int {
			for _, i := range order {
				if c := strings.Compare(a.labels[i], b.labels[i]); c != 0 {
					return c
				}
			}
			return 0
		}
		slices.SortStableFunc(samples, cmp)
		for i := 1; i < len(samples); i++ {
			if cmp(samples[i-1], samples[i]) == 0 {
				return nil, fmt.Errorf("metric %s: series %v repeated", n, samples[i].labels)
			}
		}
		if maxBytes > 0 && left <= 0 {
			return nil, bytesError(maxBytes)
		}
		text, ok := render(samples, left)
		if !ok {
			return nil, bytesError(maxBytes)
		}
		if maxBytes > 0 {
			left -= len(text)
		}
		out = append(out, family{name: n, text: text})
	}
	return out, nil
}

// render writes one family: HELP, TYPE and a line per sample, in at most
// most bytes (0: any number); false when it would take more.
func render(samples []metric, most int) ([]byte, bool) {
	d := samples[0].desc
	var b bytes.Buffer
	b.WriteString("# HELP ")
	b.WriteString(d.name)
	b.WriteByte(' ')
	escape(&b, d.help, false)
	b.WriteString("\n# TYPE ")
	b.WriteString(d.name)
	b.WriteByte(' ')
	b.WriteString(samples[0].typ.String())
	b.WriteByte('\n')
	var num []byte
	for _, m := range samples {
		b.WriteString(d.name)
		for j, i := range d.order {
			if j == 0 {
				b.WriteByte('{')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(d.labels[i])
			b.WriteString(`="`)
			escape(&b, m.labels[i], true)
			b.WriteByte('"')
		}
		if len(d.order) > 0 {
			b.WriteByte('}')
		}
		b.WriteByte(' ')
		b.Write(formatValue(num[:0], m.value))
		b.WriteByte('\n')
		if most > 0 && b.Len() > most {
			return nil, false
		}
	}
	if most > 0 && b.Len() > most {
		return nil, false
	}
	if b.Cap()-b.Len() > b.Len()/8 {
		// Held for the whole interval: no room the buffer grew into.
		return bytes.Clone(b.Bytes()), true
	}
	return b.Bytes(), true
}

// escape writes s as a HELP text (backslash and newline escaped) or a label
// value (double quote too). Bytes that are not UTF-8 become U+FFFD: a label
// value read from a host must not make the whole scrape unreadable.
func escape(b *bytes.Buffer, s string, label bool) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '"' && label:
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
}

// formatValue writes a sample value the way Prometheus reads it back exactly.
func formatValue(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// writeFamilies writes sorted lists of families merged into one list sorted
// by name; the lists must not share a name.
func writeFamilies(w io.Writer, lists ...[]family) error {
	for _, f := range mergeFamilies(lists...) {
		if _, err := w.Write(f.text); err != nil {
			return err
		}
	}
	return nil
}

// mergeFamilies is sorted lists of families as one list sorted by name,
// sharing their text: an answer is written from the text a collection
// rendered, never from a copy of it.
func mergeFamilies(lists ...[]family) []family {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	all := make([]family, 0, n)
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortStableFunc(all, func(a, b family) int { return strings.Compare(a.name, b.name) })
	return all
}
