// Package uplinks compares a multi-WAN host's uplinks to a tunnel's far
// end: the underlay measured beside the tunnel follows the tunnel's own route
// to the endpoint, so "the tunnel keeps up with the underlay" hides a tunnel
// riding the slower uplink. List reads the uplinks from a snapshot; Finding
// judges what the tunnel carried over each (its endpoint routed through it
// for a run) and what raw TCP carried (iperf3 --bind-dev): the multi-WAN
// case's 5G carried 273 Mbit/s of raw TCP and 1.7 through WireGuard, where
// the fiber's tunnel carried 63. Both are pure; Trace lists each uplink's
// hops, naming a carrier's NAT.
package uplinks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: the per-uplink underlay's analysis. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.RouteEndpointUplink}

// Uplink is one of the client's default routes, and what TCP carried to the
// far end's endpoint through it (bound to its device) and through the tunnel
// over it.
type Uplink struct {
	Dev     string `json:"dev"`
	Gateway string `json:"gateway"`
	Metric  int    `json:"metric"`
	// Tunnel: the endpoint's route takes this uplink, so the bench's
	// underlay and tunnel runs measured it.
	Tunnel bool `json:"tunnel"`
	// Mbit is raw TCP's upload to the endpoint through the uplink.
	Mbit float64 `json:"mbit"`
	// TunnelMbit and TunnelDownMbit are the tunnel's upload and download
	// with its endpoint routed through the uplink (0: not measured,
	// TunnelError says why when it was tried).
	TunnelMbit     float64 `json:"tunnel_mbit,omitempty"`
	TunnelDownMbit float64 `json:"tunnel_down_mbit,omitempty"`
	TunnelError    string  `json:"tunnel_error,omitempty"`
	// RTTMs is the median round trip to the endpoint through the uplink,
	// idle (0: not measured): the multi-WAN case's 5G uplink went through a
	// carrier NAT at 25 ms where the fiber's took 3.
	RTTMs float64 `json:"rtt_ms,omitempty"`
	Error string  `json:"error,omitempty"`
	// Hops are the uplink's path to the endpoint; TraceBy the tool that
	// listed them, TraceError why none could.
	Hops       []Hop  `json:"hops,omitempty"`
	TraceBy    string `json:"trace_by,omitempty"`
	TraceError string `json:"trace_error,omitempty"`
}

// Summary is each uplink's figures in one line: "wan 94.1 Mbit/s (tunnel
// 80.2 up, 79.5 down) 3.1 ms, wwan 9.8 Mbit/s (tunnel 1.7) 25.4 ms (the
// tunnel's)";
// devices are quoted for a terminal.
func Summary(ups []Uplink) string {
	var parts []string
	for _, u := range ups {
		s := shell.Comment(shell.Quote(u.Dev))
		switch {
		case u.Error != "":
			s += " not measured"
		default:
			s += fmt.Sprintf(" %.1f Mbit/s", u.Mbit)
		}
		switch {
		case u.TunnelMbit > 0 && u.TunnelDownMbit > 0:
			s += fmt.Sprintf(" (tunnel %.1f up, %.1f down)", u.TunnelMbit, u.TunnelDownMbit)
		case u.TunnelMbit > 0:
			s += fmt.Sprintf(" (tunnel %.1f)", u.TunnelMbit)
		}
		if u.RTTMs > 0 {
			s += " " + ms(u.RTTMs) + " ms"
		}
		if u.Tunnel {
			s += " (the tunnel's)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// ms is a round trip in milliseconds: one decimal, two below 1 ms (a
// LAN's or the lab's 0.04 ms is no 0.0).
func ms(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Lines are each uplink's figures and hops, one line each, for doctor's
// text: "eth1 via 192.0.2.1 (the tunnel's): tunnel 18.3 Mbit/s, raw TCP
// 19.1, 0.1 ms; hops 100.64.0.1 (CGNAT) → 203.0.113.2".
func Lines(ups []Uplink) []string {
	var out []string
	for _, u := range ups {
		s := shell.Comment(shell.Quote(u.Dev)) + " via " + u.Gateway
		if u.Tunnel {
			s += " (the tunnel's)"
		}
		var figs []string
		switch {
		case u.TunnelMbit > 0 && u.TunnelDownMbit > 0:
			figs = append(figs, fmt.Sprintf("tunnel %.1f Mbit/s up, %.1f down", u.TunnelMbit, u.TunnelDownMbit))
		case u.TunnelMbit > 0:
			figs = append(figs, fmt.Sprintf("tunnel %.1f Mbit/s", u.TunnelMbit))
		case u.TunnelError != "":
			figs = append(figs, "tunnel not measured ("+shell.Comment(u.TunnelError)+")")
		}
		if u.Error != "" {
			figs = append(figs, "raw TCP not measured ("+shell.Comment(u.Error)+")")
		} else {
			figs = append(figs, fmt.Sprintf("raw TCP %.1f Mbit/s", u.Mbit))
		}
		if u.RTTMs > 0 {
			figs = append(figs, ms(u.RTTMs)+" ms idle")
		}
		s += ": " + strings.Join(figs, ", ")
		switch {
		case len(u.Hops) > 0:
			s += "; hops " + HopsText(u.Hops)
		case u.TraceError != "":
			s += "; hops not traced (" + shell.Comment(u.TraceError) + ")"
		}
		out = append(out, s)
	}
	return out
}

// FasterUplink: another uplink carrying this many times what the tunnel's own
// carries means the tunnel rides the slower one.
const FasterUplink = 2.0

// List lists a host's IPv4 default routes of the main table through
// distinct devices that are up, lowest metric first: a multi-WAN host has
// more than one. It is pure.
func List(s *facts.Snapshot) []Uplink {
	if s == nil {
		return nil
	}
	down := map[string]bool{}
	for _, l := range s.Links {
		down[l.Name] = l.State == "DOWN"
	}
	var out []Uplink
	add := func(dev, gw string, metric int) {
		if dev == "" || gw == "" || down[dev] || slices.ContainsFunc(out, func(u Uplink) bool { return u.Dev == dev }) {
			return
		}
		out = append(out, Uplink{Dev: dev, Gateway: gw, Metric: metric})
	}
	for _, r := range s.Routes {
		if r.Dst != "default" || (r.Table != "main" && r.Table != "") || r.Family == "inet6" || slices.Contains(r.Flags, "linkdown") {
			continue
		}
		add(r.Dev, r.Gateway, r.Metric)
		for _, h := range r.Nexthops {
			add(h.Dev, h.Gateway, r.Metric)
		}
	}
	slices.SortStableFunc(out, func(a, b Uplink) int { return a.Metric - b.Metric })
	return out
}

// byTunnel says the uplinks are compared by the tunnel's own rate over
// each: measured over every uplink raw TCP reached. Raw TCP alone can rank
// them the wrong way (the case's 5G: 273 Mbit/s raw, 1.7 through WireGuard).
func byTunnel(ups []Uplink) bool {
	n := 0
	for _, u := range ups {
		if u.Error != "" && !u.Tunnel {
			continue
		}
		if u.TunnelMbit <= 0 {
			return false
		}
		n++
	}
	return n > 1
}

// Finding is route.endpoint-uplink when another uplink carries
// FasterUplink times what the tunnel's own does to the same endpoint: the
// tunnel over it where that was measured (byTunnel), raw TCP otherwise; nil
// otherwise. It is pure.
func Finding(client target.Spec, endpoint, iface string, ups []Uplink, tunnelMbit float64) *finding.Finding {
	i := slices.IndexFunc(ups, func(u Uplink) bool { return u.Tunnel })
	if i < 0 || ups[i].Mbit <= 0 {
		return nil
	}
	tunnel := byTunnel(ups)
	rate := func(u Uplink) float64 {
		if tunnel {
			return u.TunnelMbit
		}
		return u.Mbit
	}
	own := ups[i]
	best := own
	for _, u := range ups {
		if (u.Error == "" || tunnel) && rate(u) > rate(best) {
			best = u
		}
	}
	if rate(best) < FasterUplink*rate(own) {
		return nil
	}
	what, source, key := "", "iperf3 --bind-dev", "underlay upload through "
	if tunnel {
		what, source, key = "the tunnel carries ", "iperf3 through the tunnel, its endpoint routed through each uplink", "tunnel upload over "
	}
	f := &finding.Finding{
		ID: catalog.RouteEndpointUplink, Severity: finding.Critical, Host: client, Interface: iface,
		Title: fmt.Sprintf("The tunnel's endpoint %s is reached over %s (%s%.1f Mbit/s) while %s reaches it at %.1f",
			endpoint, own.Dev, what, rate(own), best.Dev, rate(best)),
		Detail: "The host has more than one uplink and its route to the peer's endpoint takes the slower one, so the tunnel runs at " +
			"that uplink's rate; the underlay measured beside the tunnel follows the same route and hides it. A host route added " +
			"while the other uplink was down, a policy rule, a failover policy that never fails back: whatever put it there, the " +
			"endpoint belongs on the faster uplink.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: source, Key: key + own.Dev + " (the endpoint's route)", Value: fmt.Sprintf("%.1f Mbit/s", rate(own))}.Of(rate(own), finding.Mbits),
			finding.Evidence{Source: source, Key: key + best.Dev + " (via " + best.Gateway + ")", Value: fmt.Sprintf("%.1f Mbit/s", rate(best)),
				Threshold: fmt.Sprintf("< %.0f× the endpoint's uplink", FasterUplink)}.Of(rate(best), finding.Mbits),
			finding.Evidence{Source: "iperf3", Key: "tunnel upload", Value: fmt.Sprintf("%.1f Mbit/s", tunnelMbit)}.Of(tunnelMbit, finding.Mbits),
			{Source: "iperf3 --bind-dev, ping -I", Key: "each uplink to " + endpoint, Value: Summary(ups)},
		},
	}
	if tunnel && best.Mbit < FasterUplink*own.Mbit {
		f.Detail += fmt.Sprintf(" Raw TCP alone would not have shown it (%.1f Mbit/s over %s, %.1f over %s): the tunnel's own rate over each uplink does.",
			own.Mbit, own.Dev, best.Mbit, best.Dev)
	}
	rem, err := remedy.RouteRepoint(endpoint, remedy.Route{Via: best.Gateway, Dev: best.Dev})
	f.Fixes = remedy.Fixes(fmt.Sprintf("Route the endpoint %s through %s (via %s)", endpoint, best.Dev, best.Gateway), rem, err)
	f.Fixes = append(f.Fixes, finding.Fix{
		Description: "See what sends it the other way (a host route, a policy rule, an mwan3 policy)",
		Commands:    []string{"ip route get " + endpoint, "ip rule", "ip route show " + endpoint},
	})
	return f
}
