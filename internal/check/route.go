package check

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/remedy"
)

var staleEndpoint = Check{
	Doc: `For each peer endpoint, looks for a host route to it in the main table with
protocol static and a gateway, and compares that gateway with the preferred
default route's (lowest metric, link up, not linkdown). A different gateway means
the route was created when another uplink was active and was never re-evaluated:
the multi-WAN stale endpoint route case: the tunnel ran over the 2 Mbit/s 5G backup for two months because netifd
pinned "46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static" while the
fiber was down. A host route via the preferred uplink (a full tunnel's
loop-prevention route) is fine and stays quiet. BusyBox ip (OpenWrt without
ip-full) prints no route protocols: there any host route with a gateway counts,
and the finding says the protocol was not seen; where the preferred default
is multipath, whose hops BusyBox does not print, the check says it cannot judge.
Where mwan3 runs, its status is read as the case read it: the pinned uplink's
uptime dates how old the route can be (1485h:25m, since February 4th), how long
the preferred uplink has been back, and which policies already send their
traffic over it (fiber_5g_backup: wan 100%); and netifd's uptimes (ubus) tie
the route to the moment it was made: a WireGuard interface up for longer than
the preferred uplink has been back came up while the backup was the way out.
Fix: on OpenWrt with a split tunnel nohostroute=1, so the endpoint follows
mwan3's default route; a full tunnel needs the host route against the loop,
so it is re-pointed at the preferred uplink, and on OpenWrt a hotplug script
re-points it at every uplink change (the case's "hotplug script that updates
the endpoint route when mwan3 switches uplinks"); elsewhere the stale route
is deleted.`,
	Run: runStaleEndpoint,
}

func runStaleEndpoint(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.Routes) == 0 {
		return nil, missing(s, "routes", "route")
	}
	if len(s.Endpoints) == 0 {
		if len(s.WireGuard) == 0 {
			return nil, noWireGuard(s)
		}
		return nil, nil // no peer has an endpoint: nothing to pin
	}
	var out []finding.Finding
	var unjudged []string
	seen := map[string]bool{}
	for _, e := range s.Endpoints {
		if e.Endpoint == "" || seen[e.Endpoint] {
			continue
		}
		seen[e.Endpoint] = true
		host := hostRouteTo(s, e.Endpoint)
		if host == nil {
			continue
		}
		pref := preferredDefault(s, familyOf(e.Endpoint))
		if pref == nil || (host.Gateway == pref.Gateway && (host.Dev == "" || host.Dev == pref.Dev)) {
			continue
		}
		if s.IPText && pref.Gateway == "" && pref.Dev == "" {
			unjudged = append(unjudged, e.Endpoint)
			continue
		}
		out = append(out, staleEndpointFinding(s, e, host, pref))
	}
	if len(out) == 0 && len(unjudged) > 0 {
		return nil, skipf("host route to %s found, but the preferred default route is multipath and BusyBox ip prints no hops to compare it with: "+openwrt.Install("ip-full"),
			strings.Join(unjudged, ", "))
	}
	return out, nil
}

// hostRouteTo returns the static host route to addr in the main table, if
// any; from BusyBox ip's text, which has no protocols, any host route with a
// gateway.
func hostRouteTo(s *facts.Snapshot, addr string) *facts.Route {
	for i := range s.Routes {
		r := &s.Routes[i]
		if (r.Table == "main" || r.Table == "") && staticOrUnknown(s, *r) && r.Gateway != "" && isHostRoute(r.Dst, addr) {
			return r
		}
	}
	return nil
}

// staticOrUnknown: the route is netifd's (proto static), or could be (BusyBox ip's text).
func staticOrUnknown(s *facts.Snapshot, r facts.Route) bool {
	return r.Protocol == "static" || s.IPText && r.Protocol == ""
}

func describeRoute(r *facts.Route) string {
	parts := []string{r.Dst}
	if r.Gateway != "" {
		parts = append(parts, "via", r.Gateway)
	}
	if r.Dev != "" {
		parts = append(parts, "dev", r.Dev)
	}
	if r.Protocol != "" {
		parts = append(parts, "proto", r.Protocol)
	}
	if r.Metric != 0 {
		parts = append(parts, "metric", itoa(int64(r.Metric)))
	}
	return strings.Join(parts, " ")
}

// fullTunnel reports whether, without the host route, the endpoint would be
// routed into the tunnel itself; then the host route is needed against the
// loop and must be re-pointed rather than removed.
func fullTunnel(s *facts.Snapshot, iface, addr string) bool {
	for _, r := range s.Routes {
		if r.Dev == iface && r.Dst != "" && !isHostRoute(r.Dst, addr) && routeCovers(r.Dst, addr) {
			return true
		}
	}
	return false
}

func staleEndpointFinding(s *facts.Snapshot, e facts.EndpointRoute, host, pref *facts.Route) finding.Finding {
	// Copies of the route in mwan3's per-uplink tables are part of the same mistake.
	var others []string
	for _, r := range s.Routes {
		if r.Table != "main" && r.Table != "" && staticOrUnknown(s, r) && isHostRoute(r.Dst, e.Endpoint) {
			others = append(others, "table "+r.Table)
		}
	}
	detail := fmt.Sprintf("Traffic to endpoint %s is pinned to %s via %s (metric %d) by a static host route, while the preferred "+
		"default route is via %s dev %s (metric %d). The route was made when that uplink was active and is never re-evaluated, "+
		"so the tunnel stays on it after the preferred uplink returns.",
		e.Endpoint, host.Dev, host.Gateway, host.Metric, pref.Gateway, pref.Dev, pref.Metric)
	if len(others) > 0 {
		detail += " The same route is also in " + strings.Join(others, ", ") + "."
	}
	story, storyEvidence := mwan3Story(s, e, host, pref)
	detail += story
	if s.IPText {
		detail += " BusyBox ip prints no route protocols, so this host route was taken for netifd's (proto static) by its gateway alone; " + openwrt.Install("ip-full") + " shows the protocol."
	}
	f := finding.Finding{
		ID:        catalog.RouteStaleEndpoint,
		Severity:  finding.Critical,
		Host:      hostOf(s),
		Interface: e.Interface,
		Peer:      e.Peer,
		Title:     fmt.Sprintf("Endpoint %s is routed via %s (%s), not the preferred uplink %s", e.Endpoint, host.Gateway, host.Dev, pref.Dev),
		Detail:    detail,
		Evidence: []finding.Evidence{
			{Source: "ip route show table main", Key: "host route " + e.Endpoint, Value: describeRoute(host), Threshold: "via " + pref.Gateway + " dev " + pref.Dev},
			{Source: "ip route show table main", Key: "preferred default", Value: describeRoute(pref)},
		},
	}
	if s.IPText {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "ip route show table main", Key: "route protocol",
			Value: "unknown (BusyBox ip prints none)", Threshold: "static (" + openwrt.Install("ip-full") + " to see it)"})
	}
	f.Evidence = append(f.Evidence, storyEvidence...)
	if e.Dev != "" {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "ip route get " + e.Endpoint, Key: "dev", Value: e.Dev + viaSuffix(e.Gateway)})
	}
	if fullTunnel(s, e.Interface, e.Endpoint) {
		desc := "Re-point the endpoint's host route at the preferred uplink (it is needed: the tunnel carries the default route)"
		if s.OpenWrt != nil {
			desc += "; on OpenWrt the fix also installs a hotplug script that does this at every uplink change, as netifd and mwan3 never do"
		}
		r, err := remedy.RouteRepoint(e.Endpoint, remedy.Route{Via: pref.Gateway, Dev: pref.Dev})
		f.Fixes = fixes(desc, r, err)
		return f
	}
	if s.OpenWrt != nil {
		r, err := remedy.NoHostRoute(e.Endpoint, cmp.Or(uciSection(s, e.Interface), e.Interface))
		f.Fixes = fixes("Stop netifd pinning a host route to the endpoint (split tunnel): it then follows mwan3's default route", r, err)
		return f
	}
	r, err := remedy.RouteDel(e.Endpoint, remedy.Route{Dst: host.Dst, Via: host.Gateway, Dev: host.Dev})
	f.Fixes = fixes("Delete the stale host route so the endpoint follows the preferred default route", r, err)
	return f
}

func viaSuffix(gw string) string {
	if gw == "" {
		return ""
	}
	return " via " + gw
}
