package shaping

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Summary is the sweep's outcome in one line, as doctor's probe list shows it.
func (r *Result) Summary() string {
	if r.Recommended > 0 {
		return fmt.Sprintf("a %d Mbit/s tbf cap is the steadiest", r.Recommended)
	}
	return "no cap steadier than none"
}

// WriteText prints the sweep as a table with the recommended cap and its commands.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "shape-sweep on %s %s (%.0fs)\n\n", r.Client, r.Device, r.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CAP\tMBIT/S\tRETR\tCV\tCOLLAPSES")
	for _, s := range r.Steps {
		label := "uncapped"
		if s.CapMbit > 0 {
			label = fmt.Sprintf("%d Mbit/s", s.CapMbit)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t%.2f\t%d\n", label, s.Stats.Mbit, s.Stats.Retransmits, s.Stats.CV, s.Stats.Collapses)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Recommended == 0 {
		_, err := fmt.Fprintln(w, "\nNo cap needed: uncapped is as fast and as steady.")
		return err
	}
	fmt.Fprintf(w, "\nRecommended: cap %s at %d Mbit/s\n", r.Device, r.Recommended)
	for _, f := range r.Findings {
		for _, fx := range f.Fixes {
			for _, c := range fx.Commands {
				fmt.Fprintf(w, "  $ %s\n", c)
			}
		}
	}
	return nil
}
