//go:build !router

package drops

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wgperf/wgperf/internal/shell"
)

// Result is one "wgperf drops" sampling: the sampler's status and what it
// counted in that time.
type Result struct {
	Status  Status  `json:"status"`
	Seconds float64 `json:"seconds"`
	Counts  []Count `json:"counts"`
	Lost    uint64  `json:"lost,omitempty"`
}

// Total is the packets counted.
func (r Result) Total() uint64 {
	var n uint64
	for _, c := range r.Counts {
		n += c.Packets
	}
	return n
}

// WriteText prints the status line, then the counts as a table, most
// packets first. Names come from the kernel (and from another host over
// ssh): they are printed escaped.
func (r Result) WriteText(w io.Writer) error {
	fmt.Fprintln(w, shell.Comment(r.Status.Line()))
	fmt.Fprintf(w, "%.0f s: %d packets dropped", r.Seconds, r.Total())
	if r.Lost > 0 {
		fmt.Fprintf(w, " (and %d the sampler had no room to tell apart)", r.Lost)
	}
	fmt.Fprintln(w)
	if len(r.Counts) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REASON\tPACKETS\tFUNCTION\tINTERFACE")
	for _, c := range r.Counts {
		iface := c.Interface
		if iface == "" {
			iface = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", shell.Comment(c.Reason), c.Packets, shell.Comment(c.Function), shell.Comment(iface))
	}
	return tw.Flush()
}
