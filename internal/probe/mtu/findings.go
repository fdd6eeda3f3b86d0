package mtu

import (
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Findings turns a probe result into mtu.pmtud-blackhole when large packets
// vanished without an ICMP frag-needed (DF probes) or TCP collapsed above an
// MSS through the tunnel. It is pure.
func Findings(r *Result) []finding.Finding {
	cliff := r.MSSGood > 0 && r.MSSBad > 0
	if !r.BlackHole && !cliff {
		return nil
	}
	f := finding.Finding{
		ID: check.MTUPMTUDBlackhole, Severity: finding.Critical, Host: r.Client, Interface: r.ClientIface,
		Detail: "Packets larger than the narrowest hop are dropped and the ICMP \"fragmentation needed\" that should tell the sender " +
			"never arrives, so TCP retransmits the same oversized segments forever. Lower the WireGuard MTU and clamp the MSS, " +
			"or let ICMP type 3 code 4 (ICMPv6 packet too big) through.",
	}
	if r.PathMTU > 0 {
		f.Title = fmt.Sprintf("PMTUD black hole towards %s: packets above %d bytes vanish without an ICMP frag-needed", r.Addr, r.PathMTU)
		f.Evidence = append(f.Evidence,
			finding.Evidence{Source: "ping -M do", Key: "largest DF probe that passed", Value: strconv.Itoa(r.PathMTU) + " bytes"}.Of(float64(r.PathMTU), finding.Bytes),
			finding.Evidence{Source: "ping -M do", Key: "smallest DF probe lost without an error", Value: strconv.Itoa(r.FirstFailed) + " bytes",
				Threshold: strconv.Itoa(r.SearchMax) + " bytes (the interface MTU)"}.Of(float64(r.FirstFailed), finding.Bytes),
			finding.Evidence{Source: "ping -M do", Key: "ICMP frag-needed received", Value: "none", Threshold: "one per oversized probe"})
	} else {
		f.Title = fmt.Sprintf("PMTUD black hole through the tunnel: TCP collapses above MSS %d and no DF ping gets through", r.MSSGood)
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "ping -M do", Key: "DF probes answered", Value: "none (ICMP blocked?)"})
	}
	if cliff {
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
		f.Evidence = append(f.Evidence,
			finding.Evidence{Source: "iperf3 -M", Key: fmt.Sprintf("MSS %d through the tunnel", good.MSS), Value: fmt.Sprintf("%.1f Mbit/s", good.Mbit)}.Of(good.Mbit, finding.Mbits),
			finding.Evidence{Source: "iperf3 -M", Key: fmt.Sprintf("MSS %d through the tunnel", bad.MSS), Value: fmt.Sprintf("%.1f Mbit/s", bad.Mbit),
				Threshold: fmt.Sprintf(">= %.1f Mbit/s (half of MSS %d)", HealthyShare*r.ReferenceMbit, ref)}.Of(bad.Mbit, finding.Mbits))
	}
	if outside := outsideCliff(r); len(outside) > 0 {
		f.Title += "; the hosts' own TCP outside the tunnel stalls there too"
		f.Evidence = append(f.Evidence, outside...)
	}
	if r.WGMTU > 0 {
		iface := r.ClientIface
		if iface == "" {
			iface = "wg0"
		}
		// The probe does not know the client's platform: the fix shows the
		// wg-quick and the OpenWrt way.
		mtu, err := remedy.WGMTU(iface, r.WGMTU, remedy.Unknown, "")
		f.Fixes = append(f.Fixes, remedy.Fixes(fmt.Sprintf("Set the WireGuard MTU to %d on both ends", r.WGMTU), mtu, err)...)
		clamp, err := remedy.MSSClamp(iface, r.MSSClamp, remedy.Unknown)
		f.Fixes = append(f.Fixes, remedy.Fixes(fmt.Sprintf("Clamp the MSS of TCP entering %s to %d, for hosts behind this one", iface, r.MSSClamp), clamp, err)...)
	}
	if r.OutsideGood > 0 && r.OutsideBad > 0 {
		// Linux's own black-hole detection: after a timeout, TCP probes with
		// smaller segments instead of retransmitting the same ones forever.
		probing, err := remedy.Sysctl("net.ipv4.tcp_mtu_probing", "1")
		f.Fixes = append(f.Fixes, remedy.Fixes("Let this host's own TCP find the path's MTU without ICMP (packetization-layer PMTUD)", probing, err)...)
	}
	f.Fixes = append(f.Fixes, finding.Fix{
		Description: "Let ICMP fragmentation-needed through on the router that drops it (the cure)",
		Commands:    []string{"nft insert rule inet filter forward icmp type destination-unreachable icmp code frag-needed accept"},
	})
	return []finding.Finding{f}
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
