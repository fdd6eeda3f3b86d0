package fix

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// endpointRoute removes a pinned host route to a peer's endpoint so the
// endpoint follows the default route again (seed 000); on OpenWrt it also sets
// nohostroute=1 on the interface so netifd stops re-creating it.
type endpointRoute struct {
	endpoint string
	table    string
	uciIface string
}

func newEndpointRoute(p params) (Action, error) {
	ep, err := p.get("endpoint", nil)
	if err != nil {
		return nil, err
	}
	if host, _, err := net.SplitHostPort(ep); err == nil {
		ep = host
	}
	if net.ParseIP(ep) == nil {
		return nil, fmt.Errorf("param endpoint=%q: want an IP address", p["endpoint"])
	}
	table, err := p.opt("table", wordRE)
	if err != nil {
		return nil, err
	}
	if table == "" {
		table = "main"
	}
	uciIface, err := p.opt("uci_interface", ifaceRE)
	if err != nil {
		return nil, err
	}
	return &endpointRoute{endpoint: ep, table: table, uciIface: uciIface}, nil
}

func (a *endpointRoute) Kind() string { return "endpoint-route" }

func (a *endpointRoute) Describe() string {
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
	var routes []string
	for _, l := range splitLines(string(out)) {
		var f []string
		for _, w := range strings.Fields(l) {
			if !routeFlags[w] {
				f = append(f, w)
			}
		}
		if len(f) == 0 {
			continue
		}
		routes = append(routes, strings.Join(f, " "))
		args := append([]string{"route", "del", "table", a.table}, f...)
		st.Commands = append(st.Commands, target.Quote("ip", args...))
		args[1] = "replace"
		st.Undo = append([]string{target.Quote("ip", args...)}, st.Undo...)
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
