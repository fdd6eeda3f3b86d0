// Package findingdoc renders the finding catalog (internal/check) for
// people: "wgperf explain ID", "wgperf checks" and the docs pages "make docs"
// writes into docs/findings. The check package keeps the rules and the
// catalog; this one only reads it.
package findingdoc

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
)

// Explanation is what "wgperf explain ID" prints: what a finding means, what
// raises it (each check or probe that reports it, in its own words) and so
// what to do about it.
type Explanation struct {
	ID    finding.ID     `json:"id"`
	Title string         `json:"title"`
	By    []check.Source `json:"by"`
	// Why says what the finding costs, in a few sentences.
	Why string `json:"why"`
	// Cases are the real investigations the finding comes from (Cases), none
	// for a general health check.
	Cases []string `json:"cases"`
	// Example is its fix on an example host: "wgperf fix" computes the values
	// for the real one.
	Example ExampleFixes `json:"example"`
}

// ExampleFixes is a finding's fix for one described host.
type ExampleFixes struct {
	Host  string        `json:"host"` // the situation the fixes are written for
	Fixes []finding.Fix `json:"fixes"`
}

// bothEnds reports whether the finding's fix has two halves, one on each
// end (the catalog's BothEnds).
func (e Explanation) bothEnds() bool {
	c, _ := catalog.Lookup(e.ID)
	return c.Doctor.BothEnds
}

// Kinds are the kinds of what reports the finding, each once, in order
// ("check, probe" where a bench and doctor both make it).
func (e Explanation) Kinds() []string {
	var out []string
	for _, s := range e.By {
		if !slices.Contains(out, s.Kind) {
			out = append(out, s.Kind)
		}
	}
	return out
}

// Applicable reports whether "wgperf fix" can apply some fix of the
// finding; the others are diagnostic steps to take by hand.
func (e Explanation) Applicable() bool {
	for _, f := range e.Example.Fixes {
		if f.Action != nil {
			return true
		}
	}
	return false
}

// Explain returns what is known about a catalog ID.
func Explain(id finding.ID) (Explanation, bool) {
	e, ok := check.Lookup(id)
	if !ok {
		return Explanation{}, false
	}
	return explain(e), true
}

// explain is a catalog entry as "wgperf explain" tells it.
func explain(e check.Entry) Explanation {
	x := Explanation{ID: e.ID, Title: e.Title, Why: oneLine(e.Why), Cases: append([]string{}, e.Cases...),
		Example: ExampleFixes{Host: e.Example.Host, Fixes: e.Example.Fixes()}}
	if e.Check != nil {
		x.By = append(x.By, check.Source{Kind: "check", Name: e.Title, Doc: e.Check.Doc})
	}
	if e.Cross != nil {
		x.By = append(x.By, check.Source{Kind: "cross-host check", Name: e.Cross.Title, Doc: e.Cross.Doc})
	}
	x.By = append(x.By, e.Probes...)
	return x
}

// oneLine joins a wrapped paragraph into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Explanations is the whole catalog, explained, sorted by ID.
func Explanations() []Explanation {
	out := make([]Explanation, 0, len(check.Catalog))
	for _, e := range check.Catalog {
		out = append(out, explain(e))
	}
	return out
}

// Suggest lists catalog IDs that contain s, for an ID typed wrong.
func Suggest(s string) []finding.ID {
	s = strings.ToLower(s)
	area, _, _ := strings.Cut(s, ".")
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' })
	var close, kin, same []finding.ID
	for _, e := range check.Catalog {
		id := string(e.ID)
		shares := slices.ContainsFunc(words, func(w string) bool {
			return w != area && slices.Contains(strings.FieldsFunc(id, func(r rune) bool { return r == '.' || r == '-' }), w)
		})
		switch {
		case strings.Contains(id, s) || strings.Contains(s, id):
			close = append(close, e.ID)
		case shares:
			kin = append(kin, e.ID)
		case strings.HasPrefix(id, area+"."):
			same = append(same, e.ID)
		}
	}
	// The IDs that contain what was typed, then those that share a word of
	// it ("blackhole"), then the rest of its area.
	return append(append(close, kin...), same...)
}

// WriteTable prints the catalog as "wgperf checks" does: one line per ID,
// what reports it and what it means.
func WriteTable(w io.Writer, all []Explanation) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tREPORTED BY\tMEANING")
	for _, e := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.ID, strings.Join(e.Kinds(), ", "), e.Title)
	}
	return tw.Flush()
}
