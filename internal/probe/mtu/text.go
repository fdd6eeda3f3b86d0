package mtu

import (
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Summary is the search in one line, as doctor's probe list and the lab's
// story show it.
func (r *Result) Summary() string {
	s := fmt.Sprintf("path MTU %d to %s (%d DF probes, %.0f s), black hole %v; WireGuard MTU %d fits, MSS clamp %d",
		r.PathMTU, r.Addr, len(r.Probes), r.Seconds, r.BlackHole, r.WGMTU, r.MSSClamp)
	if r.MSSGood > 0 {
		s += fmt.Sprintf("; MSS %d healthy, %d collapses", r.MSSGood, r.MSSBad)
	}
	if r.OutsideBad > 0 {
		s += fmt.Sprintf("; outside the tunnel MSS %d healthy, %d collapses", r.OutsideGood, r.OutsideBad)
	}
	return s
}

// WriteText prints a path-MTU search for a person: the path MTU, a black
// hole, the MSS steps, the recommendation and the findings.
func (r *Result) WriteText(w io.Writer) error {
	passed := 0
	for _, p := range r.Probes {
		if p.Passed {
			passed++
		}
	}
	if r.PathMTU > 0 {
		fmt.Fprintf(w, "path MTU to %s: %d bytes", r.Addr, r.PathMTU)
		if r.FragNeededMTU > 0 {
			fmt.Fprintf(w, " (a router said mtu = %d)", r.FragNeededMTU)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "path MTU to %s: unknown, no DF probe between %d and %d bytes got an answer\n", r.Addr, r.SearchMin, r.SearchMax)
	}
	if r.BlackHole {
		measured := ""
		if r.Direction != "" {
			measured = " (measured " + r.Direction + ")"
		}
		fmt.Fprintf(w, "PMTUD black hole: probes of %d bytes and more vanish with no ICMP frag-needed%s\n", r.FirstFailed, measured)
	}
	if o := r.OneWay; o != nil {
		if o.Error != "" {
			fmt.Fprintf(w, "which way it drops: not counted (%s)\n", shell.Terminal(o.Error))
		} else {
			fmt.Fprintf(w, "which way it drops: %s (%d-byte echo requests: %d/%d arrived at %s, %d/%d at %s)\n", orUntold(o.Broken),
				o.Size, o.ForwardArrived, o.ForwardSent, r.Server, o.ReturnArrived, o.ReturnSent, r.Client)
		}
	}
	for _, m := range r.MSSRuns {
		state := "healthy"
		if !m.Healthy {
			state = "collapsed"
		}
		sender := ""
		if m.Direction == Return {
			sender = ", sent by the far end"
		}
		fmt.Fprintf(w, "  MSS %d through the tunnel%s: %.1f Mbit/s %s\n", m.MSS, sender, m.Mbit, state)
	}
	for _, m := range r.OutsideRuns {
		state := "healthy"
		if !m.Healthy {
			state = "collapsed"
		}
		fmt.Fprintf(w, "  MSS %d outside the tunnel (TCP to %s): %.1f Mbit/s %s\n", m.MSS, r.Addr, m.Mbit, state)
	}
	if r.MSSError != "" {
		fmt.Fprintf(w, "MSS stepping through the tunnel did not run: %s\n", shell.Terminal(r.MSSError))
	}
	if r.WGMTU > 0 {
		fmt.Fprintf(w, "recommended WireGuard MTU: %d\nrecommended MSS clamp: %d\n", r.WGMTU, r.MSSClamp)
	}
	method := ""
	if r.Method != "" && r.Method != MethodPing {
		method = " sent with " + r.Method
	}
	fmt.Fprintf(w, "%d DF probes%s (%d passed), %d MSS steps, %.1fs\n", len(r.Probes), method, passed, len(r.MSSRuns), r.Seconds)
	return finding.WriteBrief(w, r.Findings)
}

// WriteText prints a negotiated-MSS capture for a person.
func (r *CaptureResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "MSS negotiated over the underlay to %s port %d (tcpdump on %s %s and %s %s):\n",
		r.Addr, r.Port, r.Client, r.ClientDevice, r.Server, r.ServerDevice)
	for _, p := range []MSSPath{r.Forward, r.Reverse} {
		note := "unchanged"
		if p.Clamped() {
			note = "rewritten on the way (an MSS clamp)"
		}
		fmt.Fprintf(w, "  %-7s %s -> %s: sent %d, received %d, %s\n", p.Segment, p.From, p.To, p.Sent, p.Received, note)
	}
	hdr, over := TCPIPv4Headers, OverheadIPv4
	if r.IPv6 {
		hdr, over = TCPIPv6Headers, OverheadIPv6
	}
	fmt.Fprintf(w, "narrowest MTU implied: %d bytes (MSS %d + %d)\n", r.PathMTU, r.NarrowestMSS, hdr)
	fmt.Fprintf(w, "WireGuard MTU that fits: %d (%d - %d)", r.WGMTU, r.PathMTU, over)
	if r.ClientWGMTU > 0 {
		fmt.Fprintf(w, "; %s has %d now", r.ClientInterface, r.ClientWGMTU)
	}
	fmt.Fprintf(w, "\n%.1fs\n", r.Seconds)
	return finding.WriteBrief(w, r.Findings)
}
