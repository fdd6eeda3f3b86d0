package icmpburst

import (
	"fmt"
	"io"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
)

// Summary is the experiment in one line, as doctor's probe list and the
// lab's story show it.
func (r *Result) Summary() string {
	s := fmt.Sprintf("one-shot pings failed %d/%d, one persistent ping %d/%d",
		r.OneShot.Failed, r.OneShot.Sent, r.Persistent.Failed, r.Persistent.Sent)
	for _, g := range r.Grew {
		s += fmt.Sprintf("; %s grew by %d packets", g, g.Packets)
	}
	return s
}

// WriteText prints the experiment for a person: failures per mode, the
// counters that grew and the findings.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "icmp-burst from %s to %s (%.0fs)\n", r.Host, strings.Join(r.Targets, ", "), r.Seconds)
	fmt.Fprintf(w, "  one-shot pings (a process each): %d of %d failed (%.0f%%)\n", r.OneShot.Failed, r.OneShot.Sent, 100*r.OneShot.Rate())
	fmt.Fprintf(w, "  persistent ping (one process):   %d of %d failed (%.0f%%)\n", r.Persistent.Failed, r.Persistent.Sent, 100*r.Persistent.Rate())
	for _, g := range r.Grew {
		fmt.Fprintf(w, "  counter grew by %d: %s\n", g.Packets, g)
	}
	if r.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", strings.TrimSpace(r.Note))
	}
	if len(r.Findings) == 0 {
		_, err := fmt.Fprintln(w, "No sign of an ICMP rate limiter.")
		return err
	}
	return finding.WriteBrief(w, r.Findings)
}
