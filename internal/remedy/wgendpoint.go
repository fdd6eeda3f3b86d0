package remedy

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindWGPeerEndpoint = "wg-peer-endpoint" // interface, peer (its public key), endpoint (IP:port or [IPv6]:port)
)

// wgPeerEndpoint points one peer of a WireGuard interface at another
// endpoint: now with wg set, and where the interface is made at boot
// (wg-quick's [Peer], the peer's uci section, a systemd-networkd .netdev's
// [WireGuardPeer]), each peer found by its public key. It is the near half
// of a port move (KindWGListenPort on the far end).
type wgPeerEndpoint struct {
	iface, peer string
	endpoint    netip.AddrPort
}

// WGPeerEndpoint points iface's peer (a public key: 32 bytes in base64) at
// endpoint (IP:port, [IPv6]:port). The display persists it as platform
// keeps it: wg-quick on Linux, uci on OpenWrt, both when Unknown.
func WGPeerEndpoint(iface, peer, endpoint string, platform Platform) (Remedy, error) {
	a, err := newWGPeerEndpoint(iface, peer, endpoint)
	if err != nil {
		return nil, err
	}
	ep := a.endpoint.String()
	wg := shell.Join("wg", "set", iface, "peer", peer, "endpoint", ep)
	wgQuick := finding.ConfigSnippet{Path: "/etc/wireguard/" + iface + ".conf [Peer] with PublicKey = " + peer, Lines: []string{"Endpoint = " + ep}}
	uciConf := finding.ConfigSnippet{Path: "/etc/config/network (the wireguard_" + iface + " section with public_key '" + peer + "')",
		Lines: []string{"option endpoint_host '" + a.endpoint.Addr().String() + "'", "option endpoint_port '" + strconv.Itoa(int(a.endpoint.Port())) + "'"}}
	switch platform {
	case OpenWrt:
		return shown{a, []string{wg}, []finding.ConfigSnippet{uciConf}}, nil
	case Linux:
		return shown{a, []string{wg}, []finding.ConfigSnippet{wgQuick}}, nil
	}
	return shown{a, []string{wg}, []finding.ConfigSnippet{wgQuick, uciConf}}, nil
}

func newWGPeerEndpoint(iface, peer, endpoint string) (*wgPeerEndpoint, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if err := checkPublicKey(peer); err != nil {
		return nil, err
	}
	ep, err := netip.ParseAddrPort(endpoint)
	if err != nil || ep.Port() == 0 || ep.Addr().Zone() != "" || ep.String() != endpoint {
		return nil, fmt.Errorf("endpoint %q: want IP:port or [IPv6]:port, port 1..65535", shell.Terminal(endpoint))
	}
	return &wgPeerEndpoint{iface: iface, peer: peer, endpoint: ep}, nil
}

// checkPublicKey accepts a WireGuard public key as wg prints it: 32 bytes in
// standard base64 (44 characters).
func checkPublicKey(k string) error {
	b, err := base64.StdEncoding.DecodeString(k)
	if err != nil || len(b) != 32 || len(k) != 44 {
		return fmt.Errorf("peer %q: want a WireGuard public key (32 bytes in base64)", shell.Terminal(k))
	}
	return nil
}

func parseWGPeerEndpoint(p params) (Remedy, error) {
	v, err := p.gets("interface", "peer", "endpoint")
	if err != nil {
		return nil, err
	}
	return WGPeerEndpoint(v[0], v[1], v[2], Unknown)
}

func (a *wgPeerEndpoint) Params() map[string]string {
	return map[string]string{"interface": a.iface, "peer": a.peer, "endpoint": a.endpoint.String()}
}

func (a *wgPeerEndpoint) Kind() string { return KindWGPeerEndpoint }

func (a *wgPeerEndpoint) Describe() string {
	return fmt.Sprintf("point %s's peer %s at %s, where the far end now listens", a.iface, a.peer, a.endpoint)
}

func (a *wgPeerEndpoint) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "wg", "show", a.iface, "endpoints")
	if err != nil {
		return Step{}, fmt.Errorf("%s: wg show %s endpoints: %w", env.T, a.iface, err)
	}
	now, ok := peerEndpoint(string(out), a.peer)
	switch {
	case !ok:
		return Step{}, fmt.Errorf("%s: %s has no peer %s", env.T, a.iface, a.peer)
	case !now.IsValid():
		// wg set cannot take an endpoint away again: no undo.
		return Step{}, fmt.Errorf("%s: %s's peer %s has no endpoint (it reaches this end): wgperf sets none it could not take back", env.T, a.iface, a.peer)
	}
	ep := a.endpoint.String()
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s peer %s endpoint: %s -> %s", a.iface, a.peer, now, ep)}
	if now != a.endpoint {
		st.Commands = append(st.Commands, shell.Join("wg", "set", a.iface, "peer", a.peer, "endpoint", ep))
		st.Undo = append(st.Undo, shell.Join("wg", "set", a.iface, "peer", a.peer, "endpoint", now.String()))
		st.Notes = append(st.Notes, bothHalves)
	}
	wgKey := wgConfKey{iface: a.iface, peer: a.peer, key: "Endpoint", value: ep}
	persisted, err := wgKey.planWGQuick(ctx, env, &st)
	if err != nil {
		return Step{}, err
	}
	if env.Platform == OpenWrt {
		onUCI, err := planUCIPeer(ctx, env, &st, a.iface, a.peer,
			[][2]string{{"endpoint_host", a.endpoint.Addr().String()}, {"endpoint_port", strconv.Itoa(int(a.endpoint.Port()))}})
		if err != nil {
			return Step{}, err
		}
		persisted = persisted || onUCI
	}
	if err := wgKey.planNetdevOrRuntime(ctx, env, &st, persisted, "the peer's endpoint"); err != nil {
		return Step{}, err
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}

// peerEndpoint reads "wg show IF endpoints" (a public key, a tab, the
// endpoint or "(none)", a line each): whether peer is there and its endpoint
// (invalid when it has none).
func peerEndpoint(out, peer string) (netip.AddrPort, bool) {
	v, ok := peerValue(out, peer)
	ep, err := netip.ParseAddrPort(v)
	if err != nil {
		return netip.AddrPort{}, ok
	}
	return ep, ok
}

// peerValue reads one of "wg show IF endpoints|persistent-keepalive|..."
// (a public key, a tab, its value, a line each): peer's value, and whether
// the interface has that peer.
func peerValue(out, peer string) (string, bool) {
	for _, l := range splitLines(out) {
		if k, v, ok := strings.Cut(l, "\t"); ok && k == peer {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// planUCIPeer sets options of iface's peer's uci section on OpenWrt, each
// a uci set the step commits; it reports whether the peer has a section.
func planUCIPeer(ctx context.Context, env *Env, st *Step, iface, peer string, options [][2]string) (bool, error) {
	section, err := uciPeerSection(ctx, env, iface, peer)
	if err != nil || section == "" {
		return false, err
	}
	for _, o := range options {
		sub, err := (&uciSet{key: "network." + section + "." + o[0], value: o[1]}).Plan(ctx, env)
		if err != nil {
			return false, err
		}
		if !sub.Done {
			st.merge(sub)
		}
	}
	return true, nil
}

// uciPeerSection is the uci section (a name or @type[i]) of iface's peer
// whose public_key is peer, from "uci show network"; "" when none.
func uciPeerSection(ctx context.Context, env *Env, iface, peer string) (string, error) {
	out, err := env.T.Run(ctx, "uci", "-q", "show", "network")
	if err != nil {
		return "", nil // no uci, or no network config
	}
	types := map[string]string{}
	var withKey []string
	for _, l := range splitLines(string(out)) {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, "'")
		f := strings.Split(k, ".")
		switch {
		case len(f) == 2 && f[0] == "network":
			types[f[1]] = v
		case len(f) == 3 && f[0] == "network" && f[2] == "public_key" && v == peer:
			withKey = append(withKey, f[1])
		}
	}
	for _, s := range withKey {
		if types[s] == "wireguard_"+iface && shell.UCISection(s) == nil {
			return s, nil
		}
	}
	return "", nil
}
