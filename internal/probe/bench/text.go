package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// WriteText prints the report as tables: every run, the tunnel/underlay
// comparison, and the findings with their evidence and fixes.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "bench %s -> %s: tunnel %s", r.Client, r.Server, r.TunnelAddr)
	if r.UnderlayAddr != "" {
		fmt.Fprintf(w, ", underlay %s", r.UnderlayAddr)
	}
	fmt.Fprintf(w, " (%ds runs after %ds warm-up, %.0fs in all)\n", r.Seconds, r.Omit, r.Elapsed)
	for _, s := range r.KernelDrops {
		fmt.Fprintln(w, shell.Comment(s.Line()))
	}
	if r.UnderlayBlocked != "" {
		fmt.Fprintln(w, shell.Comment("underlay baseline blocked: "+r.UnderlayBlocked+": no ratio (give --underlay-port, a port the far end lets in)"))
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tDIRECTION\tSTREAMS\tMBIT/S\tRETR\tCWND MIN/MED/MAX\tCV\tNOTES")
	for _, run := range r.Runs {
		streams := fmt.Sprint(run.Streams)
		if run.UDPMbit > 0 {
			streams = fmt.Sprintf("udp %g", run.UDPMbit)
		}
		cw := "-"
		if run.Stats.CwndMax > 0 {
			cw = fmt.Sprintf("%s/%s/%s", kb(run.Stats.CwndMin), kb(run.Stats.CwndMedian), kb(run.Stats.CwndMax))
		}
		retr := fmt.Sprint(run.Stats.Retransmits)
		if run.UDPMbit > 0 {
			retr = "-"
			cw = fmt.Sprintf("loss %.2f%% jitter %.2fms", run.Stats.LostPercent, run.Stats.JitterMs)
		}
		notes := run.Notes
		if v := StreamView(run.Result); v != "" {
			notes = append(slices.Clone(notes), v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\n", run.PathName(), run.Direction, streams, spreadText(run), retr, cw,
			run.Stats.CV, strings.Join(notes, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writeHostLoad(w); err != nil {
		return err
	}
	if len(r.Cells) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DIRECTION\tSTREAMS\tTUNNEL\tUNDERLAY\tRATIO\tEXPECTED")
		for _, c := range r.Cells {
			verdict := "ok"
			if !c.OK {
				verdict = "LOW"
			}
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%.0f%% %s\t>= %.0f%%\n", c.Direction, c.Streams, c.TunnelMbit, c.underlayText(),
				100*c.Ratio, verdict, 100*c.Expected)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	r.writeHops(w)
	if r.Clients != nil {
		if err := r.Clients.WriteText(w); err != nil {
			return err
		}
	}
	if err := r.writeLatency(w); err != nil {
		return err
	}
	if len(r.Findings) == 0 {
		_, err := fmt.Fprintln(w, "\nNo throughput problem found.")
		return err
	}
	return finding.WriteBrief(w, r.Findings) // each finding opens with a blank line
}

func kb(b int64) string {
	if b >= 1<<20 {
		return fmt.Sprintf("%.1fM", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%dK", b/1024)
}
