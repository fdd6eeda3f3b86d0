package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// flowBound is the share of the parallel streams' rate below which one
// stream counts as held back by something per flow (a hash that puts a flow
// on one link, one CPU per tunnel).
const flowBound = 0.6

// ECMPSuggestions suggests spreading flows over several tunnels (the ECMP
// case) for each host whose tunnel runs at one slave's rate of a bond
// (bondECMP), or that the bench found bound to one CPU
// (cpu.saturated) or to one flow (a single stream well below several), when
// the host has more than one uplink or WireGuard interface to spread over.
// It is pure.
func ECMPSuggestions(fs []finding.Finding, rep *bench.Report, snaps []*facts.Snapshot) []finding.Finding {
	var out []finding.Finding
	for _, s := range snaps {
		if f, ok := bondECMP(s, rep); ok {
			out = append(out, f)
			continue
		}
		why := boundBy(fs, rep, s.Host)
		if why == "" {
			continue
		}
		var ups []string
		for _, r := range s.Routes {
			if r.Dst == "default" && (r.Table == "main" || r.Table == "") && r.Dev != "" && !slices.Contains(ups, r.Dev) {
				ups = append(ups, r.Dev)
			}
		}
		var tunnels []string
		for _, w := range s.WireGuard {
			tunnels = append(tunnels, w.Name)
		}
		if len(ups) < 2 && len(tunnels) < 2 {
			continue
		}
		slices.Sort(ups)
		f := finding.Finding{
			ID:       catalog.RouteECMPSuggested,
			Severity: finding.Info,
			Host:     s.Host,
			Title:    fmt.Sprintf("One tunnel is %s, and the host has %s: ECMP over several tunnels can go past it", why, spreadOver(ups, tunnels)),
			Detail: "Every packet of one WireGuard tunnel goes to one peer over one uplink and is handled per tunnel, so one tunnel is " +
				"bound by one link's, one flow hash's or one CPU's limit. Several tunnels (one per uplink, or several between the same " +
				"ends on other ports) behind a multipath route spread the flows over all of them: the ECMP case went from 874 Mbit/s to " +
				"1.56 Gbit/s with a second tunnel.",
			Evidence: []finding.Evidence{{Source: "bench", Key: "bound by", Value: why}},
			Fixes: []finding.Fix{{
				Description: "Write the tunnels (wg-quick, Table = off) and the multipath route for two tunnels, then measure the scaling",
				Commands:    []string{shell.Join("wgperf", "fix", "ecmp", "--tunnels", "2")},
			}},
		}
		if len(ups) > 1 {
			f.Evidence = append(f.Evidence, finding.Evidence{Source: "ip route", Key: "default routes", Value: strings.Join(ups, ", ")})
		}
		if len(tunnels) > 1 {
			f.Evidence = append(f.Evidence, finding.Evidence{Source: "wg show", Key: "WireGuard interfaces", Value: strings.Join(tunnels, ", ")})
		}
		out = append(out, f)
	}
	return out
}

// boundBy says what holds a host's tunnel back, "" when nothing the bench saw.
func boundBy(fs []finding.Finding, rep *bench.Report, host target.Spec) string {
	if slices.ContainsFunc(fs, func(f finding.Finding) bool { return f.ID == catalog.CPUSaturated && f.Host.Same(host) }) {
		return "CPU-bound (a CPU at its limit while it carried traffic)"
	}
	if rep == nil {
		return ""
	}
	for _, dir := range []string{bench.Upload, bench.Download} {
		sender := rep.Client
		if dir == bench.Download {
			sender = rep.Server
		}
		if !sender.Same(host) {
			continue
		}
		var one, many *bench.Run
		for i, r := range rep.Runs {
			if r.Path != bench.PathTunnel || r.Direction != dir || r.UDPMbit > 0 || r.Result == nil {
				continue
			}
			switch {
			case r.Streams == 1:
				one = &rep.Runs[i]
			case many == nil || r.Streams > many.Streams:
				many = &rep.Runs[i]
			}
		}
		if one != nil && many != nil && many.Stats.Mbit > 0 && one.Stats.Mbit < flowBound*many.Stats.Mbit {
			return fmt.Sprintf("flow-bound (%s one stream %.0f Mbit/s, %d streams %.0f)", dir, one.Stats.Mbit, many.Streams, many.Stats.Mbit)
		}
	}
	return ""
}

func spreadOver(ups, tunnels []string) string {
	var parts []string
	if len(ups) > 1 {
		parts = append(parts, fmt.Sprintf("%d uplinks", len(ups)))
	}
	if len(tunnels) > 1 {
		parts = append(parts, fmt.Sprintf("%d WireGuard interfaces", len(tunnels)))
	}
	return strings.Join(parts, " and ")
}
