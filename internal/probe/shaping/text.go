package shaping

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Summary is the sweep's outcome in one line, as doctor's probe list shows
// it: every cap held, with its mean and slowest second, and the choice.
func (r *Result) Summary() string {
	var parts []string
	for _, s := range r.Steps {
		name := "uncapped"
		if s.CapMbit > 0 {
			name = fmt.Sprintf("cap %d", s.CapMbit)
		}
		p := fmt.Sprintf("%s: %.1f Mbit/s (slowest second %.1f, %s)", name, s.Stats.Mbit, s.MinMbit, collapsesWord(s.Stats.Collapses))
		if s.CapMbit > 0 && stable(s) {
			p = fmt.Sprintf("%s: %.1f Mbit/s steady (slowest second %.1f)", name, s.Stats.Mbit, s.MinMbit)
		}
		parts = append(parts, p)
	}
	held := fmt.Sprintf("each cap held %d s", r.HoldSeconds)
	if r.Options.Short {
		held += " (short: two cycles)"
	}
	return fmt.Sprintf("%s: %s; %s", held, strings.Join(parts, ", "), r.choice())
}

// collapsesWord is "1 collapse", "3 collapses".
func collapsesWord(n int) string {
	if n == 1 {
		return "1 collapse"
	}
	return fmt.Sprintf("%d collapses", n)
}

// choice is the recommendation in words.
func (r *Result) choice() string {
	un, capped := r.steps()
	switch {
	case r.Recommended == 0 && r.Options.Prefer == PreferMean:
		return "no cap beats the uncapped mean (--prefer mean)"
	case r.Recommended == 0:
		return "no cap steadier than none at a rate worth keeping"
	case r.TradeOff:
		return fmt.Sprintf("recommended cap %d Mbit/s, a trade-off: steady %.0f vs %.0f mean%s (--prefer mean: no cap)",
			r.Recommended, capped.Stats.Mbit, un.Stats.Mbit, collapsesPhrase(un))
	}
	return fmt.Sprintf("recommended cap %d Mbit/s: steadier and faster than the uncapped mean", r.Recommended)
}

func label(capMbit int) string {
	if capMbit > 0 {
		return fmt.Sprintf("%d Mbit/s", capMbit)
	}
	return "uncapped"
}

// WriteText prints the sweep as a table with the recommended cap and its commands.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "shape-sweep on %s %s (%.0fs, each cap held %d s", r.Client, r.Device, r.Seconds, r.HoldSeconds)
	if r.Options.Short {
		fmt.Fprint(w, ", --short: two cycles, a slower collapse may be missed")
	}
	fmt.Fprint(w, ")\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CAP\tSECONDS\tMEAN\tSLOWEST\tRETR\tCV\tCOLLAPSES\t")
	for _, s := range r.Steps {
		every := ""
		if s.PeriodSeconds > 0 {
			every = fmt.Sprintf(" every %.0f s", s.PeriodSeconds)
		}
		steady := ""
		if stable(s) {
			steady = "steady"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%d\t%.2f\t%d%s\t%s\n", label(s.CapMbit), s.Seconds, s.Stats.Mbit, s.MinMbit, s.Stats.Retransmits, s.Stats.CV, s.Stats.Collapses, every, steady)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s.\n", upper(r.choice()))
	if r.Recommended == 0 {
		return nil
	}
	for _, f := range r.Findings {
		for _, fx := range f.Fixes {
			for _, c := range fx.Commands {
				fmt.Fprintf(w, "  $ %s\n", c)
			}
		}
	}
	return nil
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
