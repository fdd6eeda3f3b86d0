package lab

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteStatus prints the lab and st (its Status) for "lab status" and "lab up".
func (l *Lab) WriteStatus(w io.Writer, st *Status) error {
	c := l.Config
	fmt.Fprintf(w, "lab %s (%s), up since %s\n", c.Name, c.Topology, l.Created.Local().Format("15:04:05"))
	fmt.Fprintf(w, "WireGuard: %s\n", l.ImplementationText())
	if c.Underlay.DelayMs > 0 {
		fmt.Fprintf(w, "delay: %d ms each way by %s\n", c.Underlay.DelayMs, l.DelayBy)
	}
	if c.KneePct > 0 {
		fmt.Fprintf(w, "knee: A's tunnel packets collapse to half for %v past %d%% of %d Mbit/s (pid %d on r)\n", kneeHold, c.KneePct, c.Underlay.RateMbit, l.Nodes["r"].KneePID)
	}
	if c.PathCycleSeconds > 0 {
		fmt.Fprintf(w, "path cycle: R's links alternate between %d and %d Mbit/s, %d s each (pid %d on r; \"ip link del dev %s\" on r steadies them)\n",
			c.Underlay.RateMbit, c.PathCycleLowMbit(), pathCycleHalf(c.PathCycleSeconds), l.Nodes["r"].PathCyclePID, PathCycleFlag)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tNAMESPACE\tWIREGUARD\tTUNNEL\tUNDERLAY\tPROCESS")
	for _, n := range st.Nodes {
		proc := "-"
		switch {
		case n.WGInterface != "" && c.WireGuard == Kernel:
			proc = "kernel"
			if !n.Running {
				proc += " (link gone)"
			}
		case n.WGInterface != "":
			proc = fmt.Sprintf("pid %d", n.PID)
			if !n.Running {
				proc += " (not running)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Netns, dash(n.WGInterface), dash(n.TunnelAddr), dash(n.UnderlayAddr), proc)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INTERFACE\tPEER\tENDPOINT\tLATEST HANDSHAKE\tRX\tTX")
	for _, p := range st.Peers {
		fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%d B\t%d B\n", p.Interface, p.PublicKey[:8], dash(p.Endpoint), p.Handshake, p.RxBytes, p.TxBytes)
	}
	tw.Flush()
	if len(st.Shaping) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "SHAPING")
		for _, s := range st.Shaping {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
