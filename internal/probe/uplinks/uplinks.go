// Package uplinks compares a multi-WAN host's uplinks to a tunnel's far
// end: the underlay measured beside the tunnel follows the tunnel's own route
// to the endpoint, so "the tunnel keeps up with the underlay" hides a tunnel
// riding the slower uplink. List reads the uplinks from a snapshot; Finding
// judges what TCP carried through each (iperf3 --bind-dev). Both are pure.
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
)

// Raises are the findings this package builds: the per-uplink underlay's analysis. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.RouteEndpointUplink}

// Uplink is one of the client's default routes, and what TCP carried to the
// far end's endpoint through it (bound to its device).
type Uplink struct {
	Dev     string `json:"dev"`
	Gateway string `json:"gateway"`
	Metric  int    `json:"metric"`
	// Tunnel: the endpoint's route takes this uplink, so the bench's
	// underlay run measured it.
	Tunnel bool    `json:"tunnel"`
	Mbit   float64 `json:"mbit"`
	// RTTMs is the median round trip to the endpoint through the uplink,
	// idle (0: not measured): the multi-WAN case's 5G uplink went through a
	// carrier NAT at 25 ms where the fiber's took 3.
	RTTMs float64 `json:"rtt_ms,omitempty"`
	Error string  `json:"error,omitempty"`
}

// Summary is each uplink's figures in one line: "wan 94.1 Mbit/s 3.1 ms,
// wwan 9.8 Mbit/s 25.4 ms (the tunnel's)"; devices are quoted for a terminal.
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
		if u.RTTMs > 0 {
			s += " " + strconv.FormatFloat(u.RTTMs, 'f', 1, 64) + " ms"
		}
		if u.Tunnel {
			s += " (the tunnel's)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
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

// Finding is route.endpoint-uplink when another uplink carries
// FasterUplink times what the tunnel's own does to the same endpoint; nil
// otherwise. It is pure.
func Finding(client, endpoint, iface string, ups []Uplink, tunnelMbit float64) *finding.Finding {
	i := slices.IndexFunc(ups, func(u Uplink) bool { return u.Tunnel })
	if i < 0 || ups[i].Mbit <= 0 {
		return nil
	}
	own := ups[i]
	best := own
	for _, u := range ups {
		if u.Error == "" && u.Mbit > best.Mbit {
			best = u
		}
	}
	if best.Mbit < FasterUplink*own.Mbit {
		return nil
	}
	f := &finding.Finding{
		ID: catalog.RouteEndpointUplink, Severity: finding.Critical, Host: client, Interface: iface,
		Title: fmt.Sprintf("The tunnel's endpoint %s is reached over %s (%.1f Mbit/s) while %s reaches it at %.1f", endpoint, own.Dev, own.Mbit, best.Dev, best.Mbit),
		Detail: "The host has more than one uplink and its route to the peer's endpoint takes the slower one, so the tunnel runs at " +
			"that uplink's rate; the underlay measured beside the tunnel follows the same route and hides it. A host route added " +
			"while the other uplink was down, a policy rule, a failover policy that never fails back: whatever put it there, the " +
			"endpoint belongs on the faster uplink.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "iperf3 --bind-dev", Key: "underlay upload through " + own.Dev + " (the endpoint's route)", Value: fmt.Sprintf("%.1f Mbit/s", own.Mbit)}.Of(own.Mbit, finding.Mbits),
			finding.Evidence{Source: "iperf3 --bind-dev", Key: "underlay upload through " + best.Dev + " (via " + best.Gateway + ")", Value: fmt.Sprintf("%.1f Mbit/s", best.Mbit),
				Threshold: fmt.Sprintf("< %.0f× the endpoint's uplink", FasterUplink)}.Of(best.Mbit, finding.Mbits),
			finding.Evidence{Source: "iperf3", Key: "tunnel upload", Value: fmt.Sprintf("%.1f Mbit/s", tunnelMbit)}.Of(tunnelMbit, finding.Mbits),
			{Source: "iperf3 --bind-dev, ping -I", Key: "each uplink to " + endpoint, Value: Summary(ups)},
		},
	}
	rem, err := remedy.RouteRepoint(endpoint, remedy.Route{Via: best.Gateway, Dev: best.Dev})
	f.Fixes = remedy.Fixes(fmt.Sprintf("Route the endpoint %s through %s (via %s)", endpoint, best.Dev, best.Gateway), rem, err)
	f.Fixes = append(f.Fixes, finding.Fix{
		Description: "See what sends it the other way (a host route, a policy rule, an mwan3 policy)",
		Commands:    []string{"ip route get " + endpoint, "ip rule", "ip route show " + endpoint},
	})
	return f
}
