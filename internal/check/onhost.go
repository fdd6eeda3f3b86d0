package check

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// HostRule is what one param's value must be on the host as it is now: one
// of its things (a WireGuard interface, a peer's endpoint, the preferred
// gateway), or the change its current state calls for (a raise, not a cut).
// p holds the action's other params. It says why not, in a phrase that
// follows the value ("is not a WireGuard interface"), nil when it passes.
//
// A findings file is someone else's text: "wgperf fix --from" holds each of
// its actions to the rules of its finding's entry on facts it has just
// collected from the target (AllowsOn), so the file can only ask for what
// wgperf's own checks would propose on that host.
type HostRule func(h *facts.Snapshot, p map[string]string, v string) error

// AllowsOn is Allows and then every HostRule of the remedy's params on h,
// the facts of the host the action would change, collected now. The error
// names the host and says what is not allowed, in one line.
func (e Entry) AllowsOn(a finding.Action, h *facts.Snapshot) error {
	if err := e.Allows(a); err != nil {
		return err
	}
	for _, r := range e.Remedies {
		if r.Kind != a.Kind {
			continue
		}
		for _, k := range sortedKeys(a.Params) {
			if rule := r.Params[k].host; rule != nil {
				if err := rule(h, a.Params, a.Params[k]); err != nil {
					return fmt.Errorf("%s: %s %s=%q %v on %s", e.ID, a.Kind, k, a.Params[k], err, hostName(h))
				}
			}
		}
	}
	return nil
}

// AllowsOn is Entry.AllowsOn for id; an ID outside the catalog allows none.
func AllowsOn(id finding.ID, a finding.Action, h *facts.Snapshot) error {
	e, ok := Lookup(id)
	if !ok {
		return &UnknownIDError{ID: id}
	}
	return e.AllowsOn(a, h)
}

// wgMTUOf is the MTU of a WireGuard interface of h, ok false when h has none
// of that name.
func wgMTUOf(h *facts.Snapshot, name string) (mtu int, ok bool) {
	for _, w := range h.WireGuard {
		if w.Name == name {
			if l := findLink(h, name); w.MTU <= 0 && l != nil {
				return l.MTU, true
			}
			return w.MTU, true
		}
	}
	if l := findLink(h, name); l != nil && l.Kind == "wireguard" {
		return l.MTU, true
	}
	return 0, false
}

// onWireGuard: the value names a WireGuard interface of the host.
func onWireGuard(h *facts.Snapshot, _ map[string]string, v string) error {
	if _, ok := wgMTUOf(h, v); !ok {
		return errors.New("is not a WireGuard interface")
	}
	return nil
}

// peerOfInterface: the value is the public key of a peer of the WireGuard
// interface the action names.
func peerOfInterface(h *facts.Snapshot, p map[string]string, v string) error {
	for _, w := range h.WireGuard {
		if w.Name != p["interface"] {
			continue
		}
		for _, peer := range w.Peers {
			if peer.PublicKey == v {
				return nil
			}
		}
	}
	return fmt.Errorf("is not a peer of %s", p["interface"])
}

// nextPort is the port a throttled port's fix moves to: the next one up,
// or down from the top of the range (udppath.NewPort).
func nextPort(port int) int {
	if port >= 65535 {
		return port - 1
	}
	return port + 1
}

// movesListenPort: the port is the one after the interface's listen port
// now, where the port fix moves it.
func movesListenPort(h *facts.Snapshot, p map[string]string, v string) error {
	for _, w := range h.WireGuard {
		if w.Name == p["interface"] && w.ListenPort > 0 && strconv.Itoa(nextPort(w.ListenPort)) == v {
			return nil
		}
	}
	return fmt.Errorf("is not the port after %s's listen port", p["interface"])
}

// movesEndpoint: the endpoint is the peer's own address at the port after
// its endpoint's port now, where the far end's listen port moves.
func movesEndpoint(h *facts.Snapshot, p map[string]string, v string) error {
	for _, w := range h.WireGuard {
		if w.Name != p["interface"] {
			continue
		}
		for _, peer := range w.Peers {
			ap, err := netip.ParseAddrPort(peer.Endpoint)
			if peer.PublicKey == p["peer"] && err == nil && netip.AddrPortFrom(ap.Addr(), uint16(nextPort(int(ap.Port())))).String() == v {
				return nil
			}
		}
	}
	return fmt.Errorf("is not the peer's endpoint address at the port after its port now")
}

// untrackable: a WireGuard interface of a host that tracks connections,
// whose traffic no NAT rule needs tracked (without conntrack such a rule
// stops working).
func untrackable(h *facts.Snapshot, p map[string]string, v string) error {
	if err := onWireGuard(h, p, v); err != nil {
		return err
	}
	if h.Conntrack == nil {
		return errors.New("is not tracked: conntrack is not loaded")
	}
	if tunnelNeedsConntrack(h, v) {
		return errors.New("is matched by a NAT rule, which needs its traffic tracked,")
	}
	return nil
}

// listenPort: the listen port of the action's WireGuard interface.
func listenPort(h *facts.Snapshot, p map[string]string, v string) error {
	for _, w := range h.WireGuard {
		if w.Name == p["interface"] && strconv.Itoa(w.ListenPort) == v {
			return nil
		}
	}
	return fmt.Errorf("is not the listen port of %s", p["interface"])
}

// lowersMTU: an MTU at most the interface's current one (wgperf lowers a
// tunnel's MTU to what its path carries, never raises it).
func lowersMTU(h *facts.Snapshot, p map[string]string, v string) error {
	cur, ok := wgMTUOf(h, p["interface"])
	n, err := strconv.Atoi(v)
	switch {
	case !ok || cur <= 0:
		return fmt.Errorf("cannot be checked: the MTU of %s is not known", p["interface"])
	case err != nil || n > cur:
		return fmt.Errorf("would raise %s's MTU from %d (wgperf only lowers it)", p["interface"], cur)
	}
	return nil
}

// forwardsInto: a WireGuard interface of a host that forwards packets from a
// LAN (or NATs), where hosts behind it need their MSS clamped.
func forwardsInto(h *facts.Snapshot, p map[string]string, v string) error {
	if err := onWireGuard(h, p, v); err != nil {
		return err
	}
	if strings.TrimSpace(h.Sysctls["net.ipv4.ip_forward"]) != "1" {
		return errors.New("clamps nothing: the host does not forward packets")
	}
	if dev, _ := lanLink(h); dev == "" {
		return errors.New("clamps nothing: no LAN link forwards into it")
	}
	return nil
}

// fitsMSS: "pmtu", or an MSS that fits the tunnel's current MTU (40 bytes of
// IPv4 and TCP header below it).
func fitsMSS(h *facts.Snapshot, p map[string]string, v string) error {
	if v == "pmtu" {
		return nil
	}
	cur, ok := wgMTUOf(h, p["oif"])
	n, err := strconv.Atoi(v)
	if !ok || cur <= 0 || err != nil || n > cur-40 {
		return fmt.Errorf("does not fit %s's MTU (%d) less 40 bytes of headers", p["oif"], cur)
	}
	return nil
}

// tunnelUCISection: on OpenWrt, the network section of the action's
// WireGuard interface.
func tunnelUCISection(h *facts.Snapshot, p map[string]string, v string) error {
	if h.OpenWrt == nil {
		return errors.New("is a uci section, and the host is not OpenWrt,")
	}
	if want := uciSection(h, p["interface"]); v != want {
		return fmt.Errorf("is not the network section of %s (%q)", p["interface"], want)
	}
	return nil
}

// raises: a sysctl value at least the host's current one (every sysctl
// wgperf proposes raises a limit); for "min default max" the max, with min
// and default kept as they are.
func raises(h *facts.Snapshot, p map[string]string, v string) error {
	key := p["key"]
	if t, ok := sysctlTriple(h, key); ok {
		f := strings.Fields(v)
		if len(f) != 3 || f[0] != itoa(t[0]) || f[1] != itoa(t[1]) {
			return fmt.Errorf("changes %s's min or default (now %q; wgperf raises the max only)", key, h.Sysctls[key])
		}
		if n, err := strconv.ParseInt(f[2], 10, 64); err != nil || n < t[2] {
			return fmt.Errorf("would lower %s's max from %d", key, t[2])
		}
		return nil
	}
	cur, ok := sysctlInt(h, key)
	if !ok {
		return fmt.Errorf("cannot be checked: the current value of %s is not known", key)
	}
	if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < cur {
		return fmt.Errorf("would lower %s from %d", key, cur)
	}
	return nil
}

// anUplink: a link that carries the host's traffic out (a default route's
// or an endpoint route's device), where the checks offer RPS.
func anUplink(h *facts.Snapshot, _ map[string]string, v string) error {
	if !uplinks(h)[v] || findLink(h, v) == nil {
		return errors.New("is not an uplink")
	}
	return nil
}

// allCPUs: the mask of every CPU of the host, on a host with more than one.
func allCPUs(h *facts.Snapshot, _ map[string]string, v string) error {
	n := len(h.Softnet)
	if n < 2 {
		return errors.New("spreads nothing: the host has one CPU (or its CPUs were not read)")
	}
	if want := cpuMask(n); v != want {
		return fmt.Errorf("is not the mask of the host's %d CPUs (%s)", n, want)
	}
	return nil
}

// lacpBond: an 802.3ad bond of the host.
func lacpBond(h *facts.Snapshot, _ map[string]string, v string) error {
	if l := findLink(h, v); l == nil || l.Bond == nil || !strings.HasPrefix(l.Bond.Mode, "802.3ad") {
		return errors.New("is not an 802.3ad bond")
	}
	return nil
}

// endpointFix: the endpoint of one of the host's peers, with the form of fix
// the checks propose there: re-point the host route (a full tunnel needs it),
// stop netifd pinning it (OpenWrt) or delete it.
func endpointFix(h *facts.Snapshot, p map[string]string, v string) error {
	i := endpointOf(h, v)
	if i < 0 {
		return errors.New("is not the endpoint of a peer")
	}
	e := h.Endpoints[i]
	if preferredDefault(h, familyOf(e.Endpoint)) == nil {
		return errors.New("has no default route to follow")
	}
	switch _, repoint := p["via"]; {
	case fullTunnel(h, e.Interface, e.Endpoint):
		if !repoint {
			return fmt.Errorf("is reached through %s's own default route: its host route is re-pointed (via, dev), not removed,", e.Interface)
		}
	case repoint:
		return errors.New("needs no host route (the tunnel does not carry the default route): it is removed, not re-pointed,")
	case h.OpenWrt != nil && p["uci_interface"] == "":
		return errors.New("is pinned by netifd on OpenWrt: the fix sets nohostroute (uci_interface), not a route deletion,")
	case h.OpenWrt == nil && p["uci_interface"] != "":
		return errors.New("is pinned by a route the fix deletes (uci_interface is for OpenWrt, which the host is not)")
	}
	return nil
}

// endpointOf is the index in h.Endpoints of the endpoint address v, -1 for none.
func endpointOf(h *facts.Snapshot, v string) int {
	a, err := netip.ParseAddr(v)
	if err != nil {
		return -1
	}
	for i, e := range h.Endpoints {
		if b, err := netip.ParseAddr(e.Endpoint); err == nil && b.Unmap() == a.Unmap() {
			return i
		}
	}
	return -1
}

// preferredGateway and preferredDev: the gateway and device of the host's
// preferred default route for the endpoint's family, where a host route to
// it is re-pointed.
func preferredGateway(h *facts.Snapshot, p map[string]string, v string) error {
	if r := preferredDefault(h, familyOf(p["endpoint"])); r == nil || r.Gateway != v {
		return errors.New("is not the gateway of the preferred default route")
	}
	return nil
}

func preferredDev(h *facts.Snapshot, p map[string]string, v string) error {
	if r := preferredDefault(h, familyOf(p["endpoint"])); r == nil || r.Dev != v {
		return errors.New("is not the device of the preferred default route")
	}
	return nil
}

// endpointUCISection: the network section of the WireGuard interface whose
// peer has the endpoint.
func endpointUCISection(h *facts.Snapshot, p map[string]string, v string) error {
	i := endpointOf(h, p["endpoint"])
	if i < 0 || h.OpenWrt == nil {
		return errors.New("is not the uci section of the endpoint's interface")
	}
	iface := h.Endpoints[i].Interface
	if want := cmp.Or(uciSection(h, iface), iface); v != want {
		return fmt.Errorf("is not the network section of %s (%q)", iface, want)
	}
	return nil
}

// limitRule: an nft rule (by handle) or iptables rule (by its text) of the
// host in the action's family, table and chain with an ICMP rate limit.
func limitRule(h *facts.Snapshot, p map[string]string, v string) error {
	for _, r := range h.Firewall.Rules {
		if !icmpLimit(r) || r.Family != p["family"] || r.Table != p["table"] || r.Chain != p["chain"] {
			continue
		}
		if r.Backend == "nft" && p["backend"] == "" && strconv.Itoa(r.Handle) == v ||
			r.Backend == "iptables" && p["backend"] == "iptables" && r.Text == v {
			return nil
		}
	}
	return fmt.Errorf("is not a rule with an ICMP rate limit in %s %s %s", p["family"], p["table"], p["chain"])
}

// icmpLimit: a rule that rate-limits ICMP, the only limits wgperf raises.
func icmpLimit(r facts.FirewallRule) bool {
	p := strings.ToLower(r.Protocol)
	return r.Limit != nil && (strings.Contains(p, "icmp") || p == "1" || p == "58")
}

// banIPLimit: an OpenWrt host whose banIP rules have a rate limit.
func banIPLimit(h *facts.Snapshot, _ map[string]string, _ string) error {
	for _, r := range h.Firewall.Rules {
		if icmpLimit(r) && isBanIP(h, r) {
			return nil
		}
	}
	return errors.New("names banIP's limit, and the host has no banIP rule with a rate limit,")
}
