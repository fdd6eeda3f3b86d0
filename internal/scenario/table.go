package scenario

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints the summary "lab run --all" ends with; color marks
// pass and fail for a terminal.
func WriteTable(w io.Writer, results []*Result, color bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tWIREGUARD\tSYMPTOM\tFINDING\tDOCTOR RANKED FIRST\tFIX\tUNDERLAY\tTUNNEL UPLOAD BEFORE → AFTER\tRATIO TO UNDERLAY (WORST WAY)\tSECONDS\tRESULT")
	for _, r := range results {
		found := "-"
		if r.Expect != "" {
			found = string(r.Expect)
			if !r.Found {
				found += " (missed)"
			}
		}
		d := r.DoctorSays()
		first := orDefault(string(d.First), orDefault(d.Status, "-"))
		fixDesc := "-"
		if len(r.Fix) > 0 {
			fixDesc = r.Fix[0]
			if len(fixDesc) > 48 {
				fixDesc = fixDesc[:47] + "…"
			}
			if len(r.Fix) > 1 {
				fixDesc += fmt.Sprintf(" (+%d)", len(r.Fix)-1)
			}
		}
		ratio := fmt.Sprintf("%.2f → %.2f", r.Before.Worst(), r.After.Worst())
		tunnel := fmt.Sprintf("%.0f → %.0f Mbit/s", r.Before.Up.Tunnel, r.After.Up.Tunnel)
		if r.VerdictOnly || r.Unavailable != "" {
			ratio = fmt.Sprintf("%.2f (verdict only)", r.Before.Worst())
			tunnel = fmt.Sprintf("%.0f Mbit/s", r.Before.Up.Tunnel)
		}
		if r.Unavailable != "" {
			fixDesc = "refused: not on this kernel"
		}
		if r.Scaling() > 0 && r.Scenario == "ecmp" {
			ratio = fmt.Sprintf("scaling %.2f×", r.Scaling())
		}
		verdict := "pass"
		switch {
		case r.Skipped:
			verdict = "skip"
		case !r.Pass:
			verdict = "FAIL"
		}
		if color && !r.Skipped {
			if r.Pass {
				verdict = "\033[32m" + verdict + "\033[0m"
			} else {
				verdict = "\033[31m" + verdict + "\033[0m"
			}
		}
		underlay := "-"
		if r.Sizing.RateMbit > 0 {
			underlay = fmt.Sprintf("%d Mbit/s", r.Sizing.RateMbit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\n", r.Scenario, orDefault(string(r.WireGuard), "-"), r.Symptom, found, first, fixDesc, underlay,
			tunnel, ratio, r.Seconds, verdict)
	}
	tw.Flush()
}
