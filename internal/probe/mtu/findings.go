package mtu

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: the path MTU search's analysis. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.MTUPMTUDBlackhole, catalog.MTUTunnelTooLarge}

// Findings turns a probe result into findings. Large DF probes that vanished
// without an ICMP frag-needed are mtu.pmtud-blackhole: critical when the
// tunnel's own packets die there too (wireguard-go sets DF; or TCP through
// the tunnel collapsed above an MSS) or traffic stalled on the path (the
// caller's bench, or the hosts' own TCP in MSS steps outside the tunnel); a
// note when the tunnel is kernel WireGuard, MSS stepping showed it pass (the
// module clears DF, so the narrow hop fragments its packets instead) and
// nothing stalled. The finding lands on the sender of the direction that
// drops (OneWay), on both ends when that was not told. A collapse through the tunnel
// on a path whose DF probes were answered is mtu.tunnel-too-large: the
// tunnel's MTU does not fit the path, and its packets above it are refused
// (DF) or their fragments lost. It is pure.
func Findings(r *Result) []finding.Finding {
	cliff := r.MSSGood > 0 && r.MSSBad > 0
	kernel := r.Implementation == "kernel"
	switch {
	case !r.BlackHole && !cliff:
		return nil
	case !r.BlackHole:
		return []finding.Finding{tooLargeForPath(r)}
	}
	f := finding.Finding{
		ID: catalog.MTUPMTUDBlackhole, Severity: finding.Critical, Host: r.Client, Interface: r.ClientIface,
		Detail: "Packets larger than the narrowest hop are dropped and the ICMP \"fragmentation needed\" that should tell the sender " +
			"never arrives, so TCP retransmits the same oversized segments forever. Lower the WireGuard MTU and clamp the MSS, " +
			"or let ICMP type 3 code 4 (ICMPv6 packet too big) through.",
	}
	switch {
	case kernel && len(r.MSSRuns) > 0 && !cliff && !r.TrafficStalled && len(outsideCliff(r)) == 0:
		// Not the tunnel's cause: a note beside the fragmenting it pays for
		// (mtu.tunnel-too-large, where a local MTU shows it). Where TCP
		// stalled, the black hole is what stalled it: critical, below.
		f.Severity = finding.Info
		f.Detail = "Packets with DF set larger than the narrowest hop vanish and no ICMP \"fragmentation needed\" comes back: traffic " +
			"outside the tunnel that relies on PMTUD stalls there. The tunnel itself passes (MSS stepping found no cliff): kernel " +
			"WireGuard clears DF on its outer packets, so the narrow hop fragments each full-size one into two, which costs packets " +
			"and doubles the harm of any loss. A WireGuard MTU that fits the path ends the fragmenting; letting ICMP type 3 code 4 " +
			"through ends the black hole."
	case kernel && !cliff && (r.TrafficStalled || len(outsideCliff(r)) > 0):
		f.Detail = "Packets with DF set larger than the narrowest hop vanish and no ICMP \"fragmentation needed\" comes back, and TCP " +
			"on this path stalled: the hosts' own transfers send full-size segments with DF and retransmit them forever. Kernel " +
			"WireGuard clears DF on its outer packets, so the tunnel's own packets are fragmented at the narrow hop instead. " +
			"Lower the WireGuard MTU to fit the path and clamp the MSS; let ICMP type 3 code 4 through."
	case kernel && cliff:
		f.Detail = "Packets larger than the narrowest hop vanish and no ICMP \"fragmentation needed\" comes back. Kernel WireGuard " +
			"clears DF on its outer packets, yet TCP through the tunnel collapses above an MSS: the fragments of its packets are " +
			"lost on the way too. Lower the WireGuard MTU to fit the path and clamp the MSS; let ICMP type 3 code 4 through."
	}
	if r.PathMTU > 0 {
		f.Title = fmt.Sprintf("PMTUD black hole %s: packets above %d bytes vanish without an ICMP frag-needed", way(r), r.PathMTU)
		f.Evidence = append(f.Evidence,
			finding.Evidence{Source: "ping -M do", Key: "largest DF probe that passed", Value: strconv.Itoa(r.PathMTU) + " bytes"}.Of(float64(r.PathMTU), finding.Bytes),
			finding.Evidence{Source: "ping -M do", Key: "smallest DF probe lost without an error", Value: strconv.Itoa(r.FirstFailed) + " bytes",
				Threshold: strconv.Itoa(r.SearchMax) + " bytes (the interface MTU)"}.Of(float64(r.FirstFailed), finding.Bytes),
			finding.Evidence{Source: "ping -M do", Key: "ICMP frag-needed received", Value: "none", Threshold: "one per oversized probe"})
	} else {
		f.Title = fmt.Sprintf("PMTUD black hole through the tunnel: TCP collapses above MSS %d and no DF ping gets through", r.MSSGood)
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "ping -M do", Key: "DF probes answered", Value: "none (ICMP blocked?)"})
	}
	f.Evidence = append(f.Evidence, mssEvidence(r)...)
	if kernel && len(r.MSSRuns) > 0 && !cliff {
		largest := r.MSSRuns[0]
		for _, m := range r.MSSRuns {
			if m.MSS > largest.MSS {
				largest = m
			}
		}
		f.Evidence = append(f.Evidence,
			finding.Evidence{Source: "iperf3 -M", Key: fmt.Sprintf("MSS %d through the tunnel (kernel WireGuard, outer DF clear)", largest.MSS),
				Value: fmt.Sprintf("%.1f Mbit/s", largest.Mbit)}.Of(largest.Mbit, finding.Mbits))
	}
	if outside := outsideCliff(r); len(outside) > 0 {
		f.Title += "; the hosts' own TCP outside the tunnel stalls there too"
		f.Evidence = append(f.Evidence, outside...)
	}
	return placed(f, r)
}

// placed puts the black hole on the sender of the direction that drops its
// packets, where a lower WireGuard MTU and an MSS clamp keep them small (the
// far end, for a return path that drops them: the client's own MTU would
// shrink only the TCP the far end sends it, through the MSS it advertises,
// and leave everything else the far end sends broken). When that was not
// told, or both ways drop, on both ends. Each copy carries its host's fixes.
func placed(f finding.Finding, r *Result) []finding.Finding {
	type end struct {
		host          target.Spec
		iface, uplink string
	}
	ends := []end{{r.Client, r.ClientIface, r.ClientUplink}}
	broken := r.Broken()
	switch {
	case broken == Return && !r.Server.IsZero():
		ends = []end{{r.Server, r.ServerIface, r.ServerUplink}}
	case broken != Forward && !r.Server.IsZero():
		ends = append(ends, end{r.Server, r.ServerIface, r.ServerUplink})
	}
	f.Evidence = append(f.Evidence, directionEvidence(r)...)
	switch broken {
	case Forward, Return:
		f.Detail += fmt.Sprintf(" Only the %s direction drops them: the fix belongs on its sender.", broken)
	case BothWays:
		f.Detail += " Both directions drop them: the fix belongs on both ends."
	default:
		f.Detail += " Which direction drops them was not told (a DF ping is a round trip): the fix belongs on both ends."
	}
	out := make([]finding.Finding, 0, len(ends))
	for _, e := range ends {
		g := f
		g.Host, g.Interface = e.host, e.iface
		g.Evidence = slices.Clone(f.Evidence)
		g.Fixes = mtuFixes(r, e.iface, broken == Forward || broken == Return)
		if r.OutsideGood > 0 && r.OutsideBad > 0 {
			// Linux's own black-hole detection: after a timeout, TCP probes with
			// smaller segments instead of retransmitting the same ones forever.
			probing, err := remedy.Sysctl("net.ipv4.tcp_mtu_probing", "1")
			g.Fixes = append(g.Fixes, remedy.Fixes("Let this host's own TCP find the path's MTU without ICMP (packetization-layer PMTUD)", probing, err)...)
		}
		g.Fixes = append(g.Fixes, finding.Fix{
			Description: "Let ICMP fragmentation-needed through on the router that drops it (the cure)",
			Commands:    []string{"nft insert rule inet filter forward icmp type destination-unreachable icmp code frag-needed accept"},
		})
		g.Fixes = append(g.Fixes, pmtudWorkarounds(e.uplink, r.PathMTU)...)
		out = append(out, g)
	}
	return out
}

// way says which way the black hole drops, for a title.
func way(r *Result) string {
	server := r.Server.String()
	if r.Server.IsZero() {
		server = r.Addr
	}
	switch r.Broken() {
	case Return:
		return fmt.Sprintf("from %s back to %s", server, r.Client)
	case BothWays:
		return fmt.Sprintf("both ways between %s and %s", r.Client, server)
	case Forward:
		return fmt.Sprintf("from %s towards %s", r.Client, r.Addr)
	}
	return "towards " + r.Addr
}

// directionEvidence is what located the black hole: echo requests of the
// first lost size, counted where they arrive, each way.
func directionEvidence(r *Result) []finding.Evidence {
	o := r.OneWay
	if o == nil {
		return nil
	}
	const src = "ping -M do, Icmp InEchos"
	if o.Error != "" {
		return []finding.Evidence{{Source: src, Key: "one-way count of echo requests", Value: "did not run: " + o.Error}}
	}
	back := fmt.Sprintf("%d of %d", o.ReturnArrived, o.ReturnSent)
	if o.ReturnRefused {
		back = "none sent: its own route MTU refuses the size (it knows the narrow hop)"
	}
	return []finding.Evidence{
		finding.Evidence{Source: src, Key: fmt.Sprintf("%d-byte echo requests from %s counted at %s", o.Size, r.Client, r.Server),
			Value: fmt.Sprintf("%d of %d", o.ForwardArrived, o.ForwardSent)}.Of(float64(o.ForwardArrived), finding.Packets),
		{Source: src, Key: fmt.Sprintf("%d-byte echo requests from %s counted at %s", o.Size, r.Server, r.Client), Value: back},
		{Source: src, Key: "direction that drops them", Value: orUntold(o.Broken)},
	}
}

// tooLargeForPath is mtu.tunnel-too-large proven by the probe: the DF probes
// found the path MTU (an ICMP frag-needed answered), and TCP through the
// tunnel collapsed above an MSS that fits it.
func tooLargeForPath(r *Result) finding.Finding {
	// What the narrow hop does with the tunnel's oversized outer packets
	// depends on who sends them.
	fate := "With DF set (wireguard-go and other userspace implementations) they are refused, and without it (kernel " +
		"WireGuard) they are fragmented at the narrow hop and the fragments are lost on the way."
	switch r.Implementation {
	case "kernel":
		fate = "This tunnel is kernel WireGuard, which clears DF on them: the narrow hop fragments each full-size packet and " +
			"the fragments are lost on the way (firewalls and carrier NATs that drop fragments do this), so small packets " +
			"pass and bulk TCP stalls."
	case "userspace":
		fate = "This tunnel is a userspace implementation, which sets DF on them: the narrow hop refuses each full-size " +
			"packet, so small packets pass and bulk TCP stalls."
	}
	f := finding.Finding{
		ID: catalog.MTUTunnelTooLarge, Severity: finding.Critical, Host: r.Client, Interface: r.ClientIface,
		Title: fmt.Sprintf("The tunnel's packets do not fit the path to %s: TCP through it collapses above MSS %d", r.Addr, r.MSSGood),
		Detail: "The path carries packets up to its MTU and says so (an ICMP \"fragmentation needed\" comes back), but the tunnel's " +
			"outer packets are larger. " + fate + " Lower the WireGuard MTU to the path MTU minus WireGuard's overhead, on both ends.",
	}
	if r.PathMTU > 0 {
		f.Evidence = append(f.Evidence,
			finding.Evidence{Source: "ping -M do", Key: "path MTU (largest DF probe that passed)", Value: strconv.Itoa(r.PathMTU) + " bytes"}.Of(float64(r.PathMTU), finding.Bytes))
	}
	if r.FragNeededMTU > 0 {
		f.Evidence = append(f.Evidence,
			finding.Evidence{Source: "ping -M do", Key: "ICMP frag-needed names MTU", Value: strconv.Itoa(r.FragNeededMTU) + " bytes"}.Of(float64(r.FragNeededMTU), finding.Bytes))
	}
	f.Evidence = append(f.Evidence, mssEvidence(r)...)
	f.Fixes = mtuFixes(r, r.ClientIface, false)
	return f
}

// mssEvidence is the MSS stepping's cliff: the largest MSS that ran and the
// smallest that collapsed; none without a cliff.
func mssEvidence(r *Result) []finding.Evidence {
	if r.MSSGood <= 0 || r.MSSBad <= 0 {
		return nil
	}
	var good, bad MSSRun
	ref := ReferenceMSS
	for i := len(r.MSSRuns) - 1; i >= 0; i-- {
		if m := r.MSSRuns[i]; m.Healthy && m.Mbit == r.ReferenceMbit {
			ref = m.MSS // the first healthy run set the reference rate
		}
	}
	for _, m := range r.MSSRuns {
		if m.MSS == r.MSSGood {
			good = m
		}
		if m.MSS == r.MSSBad {
			bad = m
		}
	}
	return []finding.Evidence{
		finding.Evidence{Source: "iperf3 -M", Key: fmt.Sprintf("MSS %d through the tunnel", good.MSS), Value: fmt.Sprintf("%.1f Mbit/s", good.Mbit)}.Of(good.Mbit, finding.Mbits),
		finding.Evidence{Source: "iperf3 -M", Key: fmt.Sprintf("MSS %d through the tunnel", bad.MSS), Value: fmt.Sprintf("%.1f Mbit/s", bad.Mbit),
			Threshold: fmt.Sprintf(">= %.1f Mbit/s (half of MSS %d)", HealthyShare*r.ReferenceMbit, ref)}.Of(bad.Mbit, finding.Mbits),
	}
}

// mtuFixes are the WireGuard MTU that fits the path and the MSS clamp behind
// it, on interface iface; sender: the host sends in the one direction that
// drops (the other end needs no change).
func mtuFixes(r *Result, iface string, sender bool) []finding.Fix {
	var out []finding.Fix
	if r.WGMTU > 0 {
		if iface == "" {
			iface = "wg0"
		}
		// The probe does not know the host's platform: the fix shows the
		// wg-quick and the OpenWrt way.
		mtu, err := remedy.WGMTU(iface, r.WGMTU, remedy.Unknown, "")
		what := fmt.Sprintf("Set the WireGuard MTU to %d on both ends", r.WGMTU)
		if sender {
			what = fmt.Sprintf("Set the WireGuard MTU to %d on this end, the sender of the direction that drops", r.WGMTU)
		}
		out = append(out, remedy.Fixes(what, mtu, err)...)
		clamp, err := remedy.MSSClamp(iface, r.MSSClamp, remedy.Unknown)
		out = append(out, remedy.Fixes(fmt.Sprintf("Clamp the MSS of TCP entering %s to %d, for hosts behind this one", iface, r.MSSClamp), clamp, err)...)
	}
	return out
}

// outsideCliff is the evidence that the black hole stalls TCP outside the
// tunnel too (Config.Outside): the largest MSS that ran to the endpoint and
// the one byte more that collapsed.
func outsideCliff(r *Result) []finding.Evidence {
	if r.OutsideGood <= 0 || r.OutsideBad <= 0 {
		return nil
	}
	var good, bad MSSRun
	for _, m := range r.OutsideRuns {
		switch m.MSS {
		case r.OutsideGood:
			good = m
		case r.OutsideBad:
			bad = m
		}
	}
	key := func(mss int) string { return fmt.Sprintf("MSS %d to %s, outside the tunnel", mss, r.Addr) }
	return []finding.Evidence{
		finding.Evidence{Source: "iperf3 -M", Key: key(good.MSS), Value: fmt.Sprintf("%.1f Mbit/s", good.Mbit)}.Of(good.Mbit, finding.Mbits),
		finding.Evidence{Source: "iperf3 -M", Key: key(bad.MSS), Value: fmt.Sprintf("%.1f Mbit/s", bad.Mbit),
			Threshold: fmt.Sprintf(">= %.1f Mbit/s (half of MSS %d)", HealthyShare*good.Mbit, good.MSS)}.Of(bad.Mbit, finding.Mbits),
	}
}
