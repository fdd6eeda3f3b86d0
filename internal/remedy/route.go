package remedy

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindEndpointRoute = "endpoint-route" // endpoint, table; optional uci_interface (OpenWrt: set nohostroute=1), or via and dev (re-point instead of delete)
)

// endpointRoute removes a pinned host route to a peer's endpoint so the
// endpoint follows the default route again (multi-WAN stale endpoint route);
// on OpenWrt it also sets nohostroute=1 on the interface so netifd stops
// re-creating it.
type endpointRoute struct {
	endpoint string
	table    string
	uciIface string
	via, dev string // set: re-point the host route there instead of deleting it
	// forRun: the route is held for one measurement (RouteForRun), so
	// nothing persists it (no OpenWrt hotplug script).
	forRun bool
}

// Route is a route as ip prints it: destination, gateway and device.
type Route struct{ Dst, Via, Dev string }

// RouteDel deletes the stale host route r to endpoint from the main table.
func RouteDel(endpoint string, r Route) (Remedy, error) {
	a, err := newEndpointRoute(endpoint, "main", "")
	if err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return shown{a, []string{shell.Join("ip", "route", "del", r.Dst, "via", r.Via, "dev", r.Dev, "table", "main")}, nil}, nil
}

// RouteRepoint re-points the endpoint's host route at the preferred uplink r
// (a full tunnel needs the route to avoid a loop, so it is not deleted).
func RouteRepoint(endpoint string, r Route) (Remedy, error) { return repoint(endpoint, r, false) }

func repoint(endpoint string, r Route, forRun bool) (Remedy, error) {
	a, err := newEndpointRoute(endpoint, "main", "")
	if err != nil {
		return nil, err
	}
	r.Dst = a.endpoint
	if err := r.check(); err != nil {
		return nil, err
	}
	a.via, a.dev, a.forRun = r.Via, r.Dev, forRun
	return shown{a, []string{shell.Join("ip", "route", "replace", a.endpoint, "via", r.Via, "dev", r.Dev, "proto", "static")}, nil}, nil
}

// RouteForRun points the endpoint's host route at uplink r for one
// measurement (the tunnel's rate over each uplink of a multi-WAN host): the
// same runtime change as RouteRepoint, and its undo, with nothing that
// would keep it (no hotplug script on OpenWrt). The caller journals it and
// removes it after the run.
func RouteForRun(endpoint string, r Route) (Remedy, error) { return repoint(endpoint, r, true) }

// NoHostRoute stops OpenWrt's netifd pinning a host route to endpoint for
// the interface in uci section uciIface (network.SECTION.nohostroute=1).
func NoHostRoute(endpoint, uciIface string) (Remedy, error) {
	if uciIface == "" {
		return nil, fmt.Errorf("no uci interface for the endpoint route")
	}
	a, err := newEndpointRoute(endpoint, "main", uciIface)
	if err != nil {
		return nil, err
	}
	return shown{a, []string{
		shell.Join("uci", "set", "network."+uciIface+".nohostroute=1"),
		"uci commit network",
		shell.Join("ifdown", uciIface) + " && " + shell.Join("ifup", uciIface),
	}, []finding.ConfigSnippet{{Path: "/etc/config/network (interface " + uciIface + ")", Lines: []string{"option nohostroute '1'"}}}}, nil
}

func (r Route) check() error {
	// ip's via and destination take no zone (the device names the link),
	// and a zone may carry any text, a space among it.
	if a, err := netip.ParseAddr(r.Via); err != nil || a.Zone() != "" {
		return fmt.Errorf("gateway %q: want an IP address", r.Via)
	}
	if _, err := netip.ParsePrefix(r.Dst); err != nil {
		if a, err := netip.ParseAddr(r.Dst); err != nil || a.Zone() != "" {
			return fmt.Errorf("route destination %q: want an address or prefix", r.Dst)
		}
	}
	return checkIface("route device", r.Dev)
}

// newEndpointRoute validates an endpoint ("addr" or "addr:port"), a routing
// table (a name or number) and an optional uci interface section.
func newEndpointRoute(endpoint, table, uciIface string) (*endpointRoute, error) {
	ep := endpoint
	if ap, err := netip.ParseAddrPort(ep); err == nil {
		ep = ap.Addr().String()
	}
	addr, err := netip.ParseAddr(ep)
	if err != nil || addr.Zone() != "" {
		return nil, fmt.Errorf("endpoint %q: want an IP address", endpoint)
	}
	if table == "" {
		table = "main"
	}
	if !wordRE.MatchString(table) {
		return nil, fmt.Errorf("routing table %q is not valid", table)
	}
	if uciIface != "" && (!ifupRE.MatchString(uciIface) || shell.UCISection(uciIface) != nil) {
		return nil, fmt.Errorf("uci interface %q is not valid", uciIface)
	}
	return &endpointRoute{endpoint: addr.String(), table: table, uciIface: uciIface}, nil
}

func parseEndpointRoute(p params) (Remedy, error) {
	ep, err := p.get("endpoint")
	if err != nil {
		return nil, err
	}
	a, err := newEndpointRoute(ep, strings.TrimSpace(p["table"]), strings.TrimSpace(p["uci_interface"]))
	if err != nil {
		return nil, err
	}
	via, dev := strings.TrimSpace(p["via"]), strings.TrimSpace(p["dev"])
	if via != "" || dev != "" {
		if a.uciIface != "" {
			return nil, fmt.Errorf("via/dev re-point the route; uci_interface removes it: not both")
		}
		if err := (Route{Dst: a.endpoint, Via: via, Dev: dev}).check(); err != nil {
			return nil, err
		}
		a.via, a.dev = via, dev
	}
	return shown{planner: a}, nil
}

func (a *endpointRoute) Params() map[string]string {
	p := map[string]string{"endpoint": a.endpoint, "table": a.table}
	if a.uciIface != "" {
		p["uci_interface"] = a.uciIface
	}
	if a.via != "" {
		p["via"], p["dev"] = a.via, a.dev
	}
	return p
}

func (a *endpointRoute) Kind() string { return KindEndpointRoute }

func (a *endpointRoute) Describe() string {
	if a.forRun {
		return fmt.Sprintf("route the endpoint %s via %s dev %s for one measurement of the tunnel over that uplink", a.endpoint, a.via, a.dev)
	}
	if a.via != "" {
		return fmt.Sprintf("re-point the host route to endpoint %s (table %s) at via %s dev %s, the current default route's uplink", a.endpoint, a.table, a.via, a.dev)
	}
	s := fmt.Sprintf("remove the pinned host route to endpoint %s (table %s) so it follows the current default route", a.endpoint, a.table)
	if a.uciIface != "" {
		s += fmt.Sprintf("; set network.%s.nohostroute=1", a.uciIface)
	}
	return s
}

// routeFlags are words ip prints after a route that it does not accept back.
var routeFlags = map[string]bool{"linkdown": true, "dead": true, "offload": true, "trap": true, "rt_offload": true, "rt_trap": true, "pervasive": true}

func (a *endpointRoute) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "ip", "route", "show", "table", a.table, "exact", a.endpoint)
	if err != nil {
		return Step{}, err
	}
	st := Step{Kind: a.Kind()}
	var current [][]string
	for _, l := range splitLines(string(out)) {
		var f []string
		for _, w := range strings.Fields(l) {
			if !routeFlags[w] {
				f = append(f, w)
			}
		}
		if len(f) > 0 {
			current = append(current, f)
		}
	}
	if a.via != "" {
		return a.planRepoint(ctx, env, current)
	}
	var routes []string
	for _, f := range current {
		routes = append(routes, strings.Join(f, " "))
		args := append([]string{"route", "del", "table", a.table}, f...)
		st.Commands = append(st.Commands, shell.Join("ip", args...))
		args[1] = "replace"
		st.Undo = append([]string{shell.Join("ip", args...)}, st.Undo...)
	}
	if len(routes) == 0 {
		st.Summary = fmt.Sprintf("no host route to %s in table %s", a.endpoint, a.table)
	} else {
		st.Summary = fmt.Sprintf("delete %q from table %s", strings.Join(routes, "; "), a.table)
	}
	if a.uciIface != "" {
		sub, err := (&uciSet{key: "network." + a.uciIface + ".nohostroute", value: "1", restart: "ifup:" + a.uciIface}).Plan(ctx, env)
		if err != nil {
			return Step{}, err
		}
		if !sub.Done {
			st.Summary += "; " + sub.Summary
			st.merge(sub)
		}
	} else if len(routes) > 0 {
		st.Notes = append(st.Notes, "if the interface routes all traffic (AllowedIPs 0.0.0.0/0 without fwmark rules), the host route prevents a loop: keep one via the current uplink instead")
	}
	st.Done = len(st.Commands) == 0
	return st, nil
}

// planRepoint adds (or replaces, at metric 0) the host route via the
// preferred uplink; undo deletes it and puts back what it replaced. On
// OpenWrt it also installs the hotplug script that re-points the route at
// every uplink change (endpointHotplug), since netifd and mwan3 never do.
func (a *endpointRoute) planRepoint(ctx context.Context, env *Env, current [][]string) (Step, error) {
	want := []string{a.endpoint, "via", a.via, "dev", a.dev, "proto", "static"}
	st := Step{Kind: a.Kind()}
	var was []string
	already := false
	for _, f := range current {
		was = append(was, strings.Join(f, " "))
		if routeVia(f, "via") == a.via && routeVia(f, "dev") == a.dev && routeVia(f, "metric") == "" {
			already = true
		}
	}
	if len(was) == 0 {
		was = []string{"none"}
	}
	if already {
		st.Summary = fmt.Sprintf("host route to %s in table %s already via %s dev %s", a.endpoint, a.table, a.via, a.dev)
	} else {
		st.Summary = fmt.Sprintf("host route to %s in table %s: %s -> via %s dev %s", a.endpoint, a.table, strings.Join(was, "; "), a.via, a.dev)
		st.Commands = []string{shell.Join("ip", append([]string{"route", "replace", "table", a.table}, want...)...)}
		st.Undo = []string{shell.Join("ip", append([]string{"route", "del", "table", a.table}, want...)...)}
		for _, f := range current {
			st.Undo = append(st.Undo, shell.Join("ip", append([]string{"route", "replace", "table", a.table}, f...)...))
		}
	}
	if a.forRun {
		st.Done = already
		return st, nil
	}
	if env.Platform != OpenWrt || a.table != "main" {
		st.Notes = []string{"runtime only: the route is made again when the interface restarts; " +
			"on multi-WAN, a hotplug script that re-points it when the uplink changes keeps it right"}
		st.Done = already
		return st, nil
	}
	path := endpointHotplugPath(a.endpoint)
	fc, err := env.change(ctx, env.Path(path), func([]byte, bool) ([]byte, error) { return []byte(endpointHotplug(a.endpoint)), nil })
	if err != nil {
		return Step{}, err
	}
	if fc != nil {
		st.Files = append(st.Files, *fc)
	}
	keep, err := keepOnSysupgrade(ctx, env, path)
	if err != nil {
		return Step{}, err
	}
	if keep != nil {
		st.Files = append(st.Files, *keep)
	}
	if len(st.Files) > 0 {
		st.Summary += "; " + path + " re-points it at every uplink change (netifd's ifup and ifdown, mwan3's connected and disconnected)"
	}
	st.Done = already && len(st.Files) == 0
	return st, nil
}

// endpointHotplugPath is the hotplug script that keeps endpoint's host
// route: OpenWrt's hotplug-call sources /etc/hotplug.d/iface/* in name
// order at every interface event, after mwan3's own (1x-mwan3*).
func endpointHotplugPath(endpoint string) string {
	return "/etc/hotplug.d/iface/95-wgperf-endpoint-" + strings.NewReplacer(".", "-", ":", "-").Replace(endpoint)
}

// endpointHotplug is the script at endpointHotplugPath: on an uplink's
// change it points the endpoint's host route at the default route of its
// family with the lowest metric, leaving out, for that event, the device of
// an uplink mwan3 has just found disconnected (its route stays while
// tracking fails; mwan3track's "connected" brings it back). A full tunnel
// keeps the host route against the loop, so nothing else moves it (the
// multi-WAN case: "a hotplug script that updates the endpoint route when
// mwan3 switches uplinks"). BusyBox ash and awk run it; endpoint is an IP
// address (newEndpointRoute).
func endpointHotplug(endpoint string) string {
	family := "-4"
	if strings.Contains(endpoint, ":") {
		family = "-6"
	}
	return `# wgperf fix (route.stale-endpoint): keeps the host route to the WireGuard
# endpoint ` + endpoint + ` on the uplink in use. hotplug-call runs this at every
# interface's ifup and ifdown (netifd) and connected and disconnected (mwan3track).
# Undo: wgperf fix rollback, or delete this file.
wgperf_endpoint_route() {
	case "$ACTION" in
	ifup | ifdown | connected | disconnected) ;;
	*) return 0 ;;
	esac
	skip=
	[ "$ACTION" = disconnected ] && skip=$DEVICE
	set -- $(ip ` + family + ` route show default | awk -v skip="$skip" '$2 == "via" && $4 == "dev" && $5 != skip {
		m = 0; for (i = 6; i < NF; i++) if ($i == "metric") m = $(i + 1); print m, $3, $5 }' | sort -n | head -n 1)
	[ -n "$3" ] && ip route replace ` + endpoint + ` via "$2" dev "$3" proto static
}
wgperf_endpoint_route
`
}

// routeVia returns the word after key in a route's fields ("" when absent).
func routeVia(f []string, key string) string {
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1]
		}
	}
	return ""
}
