package remedy

import (
	"context"
	"fmt"
	"strings"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindWGPortMove = "wg-port-move" // interface, port, peer (its public key), endpoint (IP:port or [IPv6]:port); optional uci_section
)

// wgPortMove is the near end's half of a port move where both ends listen on
// the throttled port: the near end's datagrams leave from that port too,
// which a rule on "udp port" meets, so its own listen port moves as well as
// its peer's endpoint, in one step (the far end learns the new source port
// from the next authenticated packet, as WireGuard roams). It is
// KindWGListenPort and KindWGPeerEndpoint planned together.
type wgPortMove struct {
	listen   *wgListenPort
	endpoint *wgPeerEndpoint
}

// WGPortMove moves iface to listen port port and points its peer at
// endpoint, persisted as platform keeps both.
func WGPortMove(iface string, port int, peer, endpoint string, platform Platform, uciSection string) (Remedy, error) {
	l, err := WGListenPort(iface, port, platform, uciSection)
	if err != nil {
		return nil, err
	}
	e, err := WGPeerEndpoint(iface, peer, endpoint, platform)
	if err != nil {
		return nil, err
	}
	a := &wgPortMove{listen: l.(shown).planner.(*wgListenPort), endpoint: e.(shown).planner.(*wgPeerEndpoint)}
	return shown{a, append(l.Commands(), e.Commands()...), append(l.Config(), e.Config()...)}, nil
}

func parseWGPortMove(p params) (Remedy, error) {
	v, err := p.gets("interface", "peer", "endpoint")
	if err != nil {
		return nil, err
	}
	port, err := p.int("port")
	if err != nil {
		return nil, err
	}
	return WGPortMove(v[0], port, v[1], v[2], Unknown, strings.TrimSpace(p["uci_section"]))
}

func (a *wgPortMove) Params() map[string]string {
	p := a.listen.Params()
	for k, v := range a.endpoint.Params() {
		p[k] = v
	}
	return p
}

func (a *wgPortMove) Kind() string { return KindWGPortMove }

func (a *wgPortMove) Describe() string {
	return fmt.Sprintf("move %s to listen port %d and point its peer %s at %s, where the far end now listens: both ends off the throttled port",
		a.listen.iface, a.listen.port, a.endpoint.peer, a.endpoint.endpoint)
}

// Plan plans the listen port, then the endpoint on the same files, as one step.
func (a *wgPortMove) Plan(ctx context.Context, env *Env) (Step, error) {
	st, err := a.listen.Plan(ctx, env)
	if err != nil {
		return Step{}, err
	}
	ep, err := a.endpoint.Plan(ctx, env)
	if err != nil {
		return Step{}, err
	}
	st.merge(ep)
	st.Kind = a.Kind()
	st.Summary = fmt.Sprintf("%s; %s", st.Summary, ep.Summary)
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}
