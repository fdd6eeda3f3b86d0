package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wgperf/wgperf/internal/shell"
)

// writeHostLoad prints what each end's CPUs and TCP did during each run:
// context switches and the NICs' interrupts per second (per CPU), the
// segments received out of order and the sender's reorder detections. The
// remote users case read the same counters off node exporter: 7-10x the
// idle interrupts and context switches, 207 out-of-order packets/s. Nothing
// is printed for a report without them (one from before they were kept).
func (r *Report) writeHostLoad(w io.Writer) error {
	if !r.hasHostLoad() {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tHOST\tCTXT/S\tNIC INTERRUPTS/S PER CPU\tRECEIVED OUT OF ORDER\tREORDERS SEEN SENDING")
	for _, run := range r.Runs {
		type end struct {
			d      HostDelta
			uplink string
		}
		ends := []end{{run.Client, r.ClientUplink}, {run.Server, r.ServerUplink}}
		if run.Direction == Download {
			ends[0], ends[1] = ends[1], ends[0] // the sender first
		}
		for _, e := range ends {
			if e.d.Host.IsZero() || e.d.Seconds <= 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", run.Spec, e.d.Host, perSecond(float64(e.d.ContextSwitches), e.d.Seconds),
				e.d.nicRates(e.uplink), e.d.outOfOrder(), e.d.reorders())
		}
	}
	return tw.Flush()
}

func (r *Report) hasHostLoad() bool {
	for _, run := range r.Runs {
		for _, d := range []HostDelta{run.Client, run.Server} {
			if d.Seconds > 0 && (d.ContextSwitches > 0 || d.TCP != nil || len(d.NICInterrupts) > 0) {
				return true
			}
		}
	}
	return false
}

// perSecond renders n over s seconds as "61.1K", "-" for nothing counted.
func perSecond(n, s float64) string {
	if n <= 0 || s <= 0 {
		return "-"
	}
	r := n / s
	if r >= 1000 {
		return fmt.Sprintf("%.1fK", r/1000)
	}
	return fmt.Sprintf("%.0f", r)
}

// nicRates: the tunnel's NIC's interrupts per second on each CPU, "eth0:
// 24, 25": the uplink towards the other end where it took some, else the
// busiest NIC.
func (d HostDelta) nicRates(uplink string) string {
	if len(d.NICInterrupts) == 0 {
		return "-"
	}
	n := d.NICInterrupts[0]
	for _, x := range d.NICInterrupts {
		if x.Device == uplink {
			n = x
		}
	}
	rates := make([]string, len(n.PerCPU))
	for c, v := range n.PerCPU {
		rates[c] = perSecond(float64(v), d.Seconds)
		if v == 0 {
			rates[c] = "0"
		}
	}
	return shell.Comment(n.Device) + ": " + strings.Join(rates, ", ")
}

// outOfOrder: "86,730 of 96,345 (90%)", "-" without the counters.
func (d HostDelta) outOfOrder() string {
	if d.TCP == nil || d.TCP.InSegs == 0 {
		return "-"
	}
	return fmt.Sprintf("%s of %s (%.0f%%)", Commas(d.TCP.OFOQueue), Commas(d.TCP.InSegs), 100*d.TCP.OutOfOrderShare())
}

// reorders: "8 against 4,064 retransmits", with the verdict when reordered.
func (d HostDelta) reorders() string {
	if d.TCP == nil || d.TCP.OutSegs == 0 {
		return "-"
	}
	s := fmt.Sprintf("%s against %s retransmits", Commas(d.TCP.ReorderSeen()), Commas(d.TCPRetransSegs))
	if d.Reordered() {
		s += ": REORDERED"
	}
	return s
}
