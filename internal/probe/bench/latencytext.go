package bench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wgperf/wgperf/internal/shell"
)

// writeLatency prints the round trips: idle, then during each run that
// pinged, through the tunnel and over the underlay side by side.
func (r *Report) writeLatency(w io.Writer) error {
	if r.IdleLatency == nil {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND TRIP (MIN/MEDIAN/P90/MAX)\tTUNNEL\tUNDERLAY")
	row := func(name string, l *Latency) {
		under := "-"
		if r.UnderlayAddr != "" {
			under = l.Underlay.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, l.Tunnel.String(), under)
	}
	row("idle", r.IdleLatency)
	for _, run := range r.Runs {
		if run.Latency != nil {
			row("during "+run.Spec.String(), run.Latency)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, l := range append([]*Latency{r.IdleLatency}, r.runLatencies()...) {
		for _, e := range l.Errors {
			if !seen[e] {
				seen[e] = true
				fmt.Fprintln(w, "  "+shell.Comment(e)) // ping's own words, from the client host
			}
		}
	}
	return nil
}

func (r *Report) runLatencies() []*Latency {
	var out []*Latency
	for _, run := range r.Runs {
		if run.Latency != nil {
			out = append(out, run.Latency)
		}
	}
	return out
}
