package remedy

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	// KindECMP: interface (the existing site-to-site tunnel, one peer),
	// tunnels (2..16, the existing one included), peer_keys (the public keys
	// of the other end's new tunnels, comma separated, tunnels-1 of them);
	// optional ports and peer_ports (the new tunnels' listen ports on this
	// end and on the other, comma separated, tunnels-1 each; by default the
	// ports after each end's own).
	KindECMP = "ecmp-tunnels"
)

// MaxECMPTunnels is the most tunnels an ECMP fix spreads over.
const MaxECMPTunnels = 16

// ecmpTunnels adds tunnels-1 WireGuard interfaces beside an existing
// site-to-site tunnel, to the same peer host on the next ports, and routes
// the networks the existing tunnel carries over all of them with a multipath
// route hashing on layer 4 (the ECMP case: flows spread over tunnels that an
// 802.3ad bond or the uplinks carry apart). Both ends need the mirror image:
// each end's half names the other end's new public keys, which is why the
// two halves go together ("wgperf fix ecmp --server"). The new tunnels'
// private keys are derived on the host from the existing tunnel's private
// key and a label (ECMPKeyCommand): they never leave the host, and the plan
// of the other end can name their public keys before anything changes.
type ecmpTunnels struct {
	iface    string
	tunnels  int
	peerKeys []string
	// ports and peerPorts are the new tunnels' listen ports here and on
	// the other end (SpreadPorts), nil for the ports after each end's own.
	ports, peerPorts []int
}

// ECMP spreads iface's traffic over tunnels tunnels (iface and tunnels-1 new
// ones), peerKeys being the other end's new tunnels' public keys in order.
func ECMP(iface string, tunnels int, peerKeys []string) (Remedy, error) {
	return ECMPOnPorts(iface, tunnels, peerKeys, nil, nil)
}

// ECMPOnPorts is ECMP with the new tunnels' listen ports chosen on both
// ends (ports here, peerPorts on the other end; tunnels-1 each), as
// SpreadPorts chooses them for a bond; nil for the ports after each end's.
func ECMPOnPorts(iface string, tunnels int, peerKeys []string, ports, peerPorts []int) (Remedy, error) {
	a := &ecmpTunnels{iface: iface, tunnels: tunnels, peerKeys: peerKeys, ports: ports, peerPorts: peerPorts}
	if (ports == nil) != (peerPorts == nil) {
		return nil, fmt.Errorf("ports on one end only: give both ends' or neither")
	}
	for _, list := range [][]int{ports, peerPorts} {
		if list == nil {
			continue
		}
		if len(list) != tunnels-1 {
			return nil, fmt.Errorf("%d ports for %d tunnels: want one for each new tunnel (%d)", len(list), tunnels, tunnels-1)
		}
		for i, p := range list {
			if p < 1 || p > 65535 || slices.Contains(list[:i], p) {
				return nil, fmt.Errorf("port %d: want distinct ports in 1..65535", p)
			}
		}
	}
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if tunnels < 2 || tunnels > MaxECMPTunnels {
		return nil, fmt.Errorf("%d tunnels: want 2..%d", tunnels, MaxECMPTunnels)
	}
	if len(peerKeys) != tunnels-1 {
		return nil, fmt.Errorf("%d peer keys for %d tunnels: want one for each new tunnel (%d)", len(peerKeys), tunnels, tunnels-1)
	}
	for _, k := range peerKeys {
		if err := checkPublicKey(k); err != nil {
			return nil, err
		}
	}
	for _, d := range ECMPDevices(iface, tunnels)[1:] {
		if err := checkIface("new interface", d); err != nil {
			return nil, err
		}
	}
	cmd := shell.Join("wgperf", "fix", "ecmp", "--interface", iface, "--tunnels", strconv.Itoa(tunnels), "--apply")
	return shown{a, []string{cmd + " --server THE-OTHER-END"}, nil}, nil
}

func parseECMP(p params) (Remedy, error) {
	iface, err := p.get("interface")
	if err != nil {
		return nil, err
	}
	n, err := p.int("tunnels")
	if err != nil {
		return nil, err
	}
	keys, err := p.get("peer_keys")
	if err != nil {
		return nil, err
	}
	ports, err := portList(p["ports"])
	if err != nil {
		return nil, err
	}
	peerPorts, err := portList(p["peer_ports"])
	if err != nil {
		return nil, err
	}
	return ECMPOnPorts(iface, n, strings.Split(keys, ","), ports, peerPorts)
}

// portList reads "51822,51825" (nil for ""): whole numbers as written.
func portList(s string) ([]int, error) {
	if s = strings.TrimSpace(s); s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || strconv.Itoa(n) != f {
			return nil, fmt.Errorf("port %q is not a number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinPorts(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

func (a *ecmpTunnels) Kind() string { return KindECMP }

func (a *ecmpTunnels) Params() map[string]string {
	p := map[string]string{"interface": a.iface, "tunnels": strconv.Itoa(a.tunnels), "peer_keys": strings.Join(a.peerKeys, ",")}
	if a.ports != nil {
		p["ports"], p["peer_ports"] = joinPorts(a.ports), joinPorts(a.peerPorts)
	}
	return p
}

func (a *ecmpTunnels) Describe() string {
	return fmt.Sprintf("spread %s's flows over %d tunnels to the same peer (%s), with a multipath route hashing on ports",
		a.iface, a.tunnels, strings.Join(ECMPDevices(a.iface, a.tunnels), ", "))
}

// ECMPDevices are the n tunnels' interface names: iface, then the next
// numbers (wg0: wg1, wg2; wg-site: wg-site1, wg-site2).
func ECMPDevices(iface string, n int) []string {
	base := strings.TrimRight(iface, "0123456789")
	first, err := strconv.Atoi(iface[len(base):])
	if err != nil {
		base, first = iface, 0
	}
	out := []string{iface}
	for k := 1; k < n; k++ {
		out = append(out, base+strconv.Itoa(first+k))
	}
	return out
}

// ECMPKeyCommand is the shell that prints the private key of iface's k-th
// ECMP tunnel on the host: SHA-256 over iface's own private key and a
// label, in WireGuard's base64 (wg clamps it as it clamps any key). It runs
// only piped into wg (set ... private-key /dev/stdin, or pubkey): the key
// stays in the host's pipes and is in no argument, file, plan or journal.
func ECMPKeyCommand(iface string, k int) string {
	return shell.Join("wg", "show", iface, "private-key") +
		` | { read -r k && printf '%s wgperf-ecmp-` + strconv.Itoa(k) + `' "$k" | sha256sum; }` +
		` | { read -r h _ && b= && while [ -n "$h" ]; do t=${h#??}; b="$b\\$(printf %03o "0x${h%"$t"}")"; h=$t; done && printf "$b" | base64; }`
}

// ECMPPublicKeys are the public keys iface's new ECMP tunnels (1..n-1) will
// have on env's host: what the other end's half names as its peers. It
// only reads; the private keys do not leave the host.
func ECMPPublicKeys(ctx context.Context, env *Env, iface string, n int) ([]string, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	var keys []string
	for k := 1; k < n; k++ {
		out, err := env.sh(ctx, ECMPKeyCommand(iface, k)+" | wg pubkey")
		if err != nil {
			return nil, fmt.Errorf("%s: the public key of %s's tunnel %d: %w", env.T, iface, k+1, err)
		}
		key := strings.TrimSpace(string(out))
		if err := checkPublicKey(key); err != nil {
			return nil, fmt.Errorf("%s: the public key of %s's tunnel %d: %w", env.T, iface, k+1, err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// ECMPHost is what an ECMP half reads from its host: "wg show all dump",
// "ip -j route", the existing tunnel's MTU and the multipath hash policy.
type ECMPHost struct {
	WG         []facts.WGInterface
	Routes     []facts.Route
	MTU        int
	HashPolicy string
	// Userspace, when set, is how a new tunnel is made (Env.WGUserspace).
	Userspace func(dev string) string
}

// ReadECMPHost reads what PlanECMPHalf needs from env's host.
func ReadECMPHost(ctx context.Context, env *Env, iface string) (ECMPHost, error) {
	h := ECMPHost{Userspace: env.WGUserspace}
	out, err := env.T.Run(ctx, "wg", "show", "all", "dump")
	if err != nil {
		return h, fmt.Errorf("%s: wg show all dump: %w", env.T, err)
	}
	if h.WG, err = parse.ParseWGDump(bytes.NewReader(out)); err != nil {
		return h, fmt.Errorf("%s: %w", env.T, err)
	}
	if out, err = env.T.Run(ctx, "ip", "-j", "route"); err != nil {
		return h, fmt.Errorf("%s: ip -j route: %w", env.T, err)
	}
	if h.Routes, err = parse.ParseIPRoute(bytes.NewReader(out), "inet"); err != nil {
		return h, fmt.Errorf("%s: %w", env.T, err)
	}
	if out, err = env.T.ReadFile(ctx, "/sys/class/net/"+iface+"/mtu"); err != nil {
		return h, fmt.Errorf("%s: %s's MTU: %w", env.T, iface, err)
	}
	if h.MTU, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
		return h, fmt.Errorf("%s: %s's MTU %q", env.T, iface, shell.Terminal(string(out)))
	}
	if out, err = env.T.ReadFile(ctx, "/proc/sys/net/ipv4/fib_multipath_hash_policy"); err == nil {
		h.HashPolicy = strings.TrimSpace(string(out))
		if _, err := strconv.ParseUint(h.HashPolicy, 10, 8); err != nil {
			return h, fmt.Errorf("%s: multipath hash policy %q is not a number", env.T, shell.Terminal(h.HashPolicy))
		}
	}
	return h, nil
}

func (a *ecmpTunnels) Plan(ctx context.Context, env *Env) (Step, error) {
	h, err := ReadECMPHost(ctx, env, a.iface)
	if err != nil {
		return Step{}, err
	}
	return a.plan(h)
}

// PlanECMPHalf is the step of one end's half on a host as read (pure).
func PlanECMPHalf(r Remedy, h ECMPHost) (Step, error) {
	a, ok := unshown(r).(*ecmpTunnels)
	if !ok {
		return Step{}, fmt.Errorf("%s is not an ECMP fix", r.Kind())
	}
	return a.plan(h)
}

func unshown(r Remedy) planner {
	if s, ok := r.(shown); ok {
		return s.planner
	}
	return r
}

func (a *ecmpTunnels) plan(h ECMPHost) (Step, error) {
	devs := ECMPDevices(a.iface, a.tunnels)
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s: 1 tunnel -> %d (%s)", a.iface, a.tunnels, strings.Join(devs, ", "))}
	i := slices.IndexFunc(h.WG, func(w facts.WGInterface) bool { return w.Name == a.iface })
	if i < 0 {
		return Step{}, fmt.Errorf("%s is not a WireGuard interface here (wg show all dump)", a.iface)
	}
	wg := h.WG[i]
	if len(wg.Peers) != 1 {
		return Step{}, fmt.Errorf("%s has %d peers: ECMP needs a site-to-site tunnel with exactly one peer", a.iface, len(wg.Peers))
	}
	if wg.ListenPort == 0 {
		return Step{}, fmt.Errorf("%s has no listen port: each tunnel takes the next one", a.iface)
	}
	peer := wg.Peers[0]
	own, err := ownTunnelPrefix(h.Routes, a.iface)
	if err != nil {
		return Step{}, err
	}
	peerAddr, err := PeerTunnelAddr(a.iface, peer.AllowedIPs, own)
	if err != nil {
		return Step{}, err
	}
	tunnels, allowed, err := ECMPSpec{Iface: a.iface, Tunnels: a.tunnels, Own: own, PeerAddr: peerAddr, ListenPort: wg.ListenPort,
		Endpoint: peer.Endpoint, AllowedIPs: peer.AllowedIPs, Ports: a.ports, PeerPorts: a.peerPorts}.Layout()
	if err != nil {
		return Step{}, err
	}
	list := strings.Join(allowed, ",")

	present := 0
	for _, d := range devs[1:] {
		if slices.ContainsFunc(h.WG, func(w facts.WGInterface) bool { return w.Name == d }) {
			present++
		}
	}
	nets := ecmpNetworks(h.Routes, a.iface, own)
	if present == len(devs)-1 && len(nets) == 0 {
		st.Done = true
		return st, nil
	}
	if present > 0 {
		return Step{}, fmt.Errorf("%d of the new interfaces (%s) exist already: roll back the fix that made them (wgperf fix rollback) or remove them first",
			present, strings.Join(devs[1:], ", "))
	}

	for k := 1; k < a.tunnels; k++ {
		dev := devs[k]
		create := shell.Join("ip", "link", "add", "dev", dev, "type", "wireguard")
		if h.Userspace != nil {
			create = h.Userspace(dev)
		}
		set := []string{"wg", "set", dev, "listen-port", strconv.Itoa(tunnels[k].ListenPort), "private-key", "/dev/stdin",
			"peer", a.peerKeys[k-1]}
		if tunnels[k].Endpoint != "" {
			set = append(set, "endpoint", tunnels[k].Endpoint)
		}
		if peer.PersistentKeepalive > 0 {
			set = append(set, "persistent-keepalive", strconv.Itoa(peer.PersistentKeepalive))
		}
		set = append(set, "allowed-ips", list)
		st.Commands = append(st.Commands,
			create,
			shell.Join("ip", "address", "add", tunnels[k].Address.String(), "dev", dev),
			ECMPKeyCommand(a.iface, k)+" | "+shell.Join(set[0], set[1:]...),
			shell.Join("ip", "link", "set", "dev", dev, "mtu", strconv.Itoa(h.MTU), "up"))
		st.Undo = append([]string{shell.Join("ip", "link", "del", "dev", dev)}, st.Undo...)
	}
	if list != strings.Join(peer.AllowedIPs, ",") {
		st.Commands = append(st.Commands, shell.Join("wg", "set", a.iface, "peer", peer.PublicKey, "allowed-ips", list))
		st.Undo = append([]string{shell.Join("wg", "set", a.iface, "peer", peer.PublicKey, "allowed-ips", strings.Join(peer.AllowedIPs, ","))}, st.Undo...)
	}
	if len(nets) > 0 && h.HashPolicy != "1" {
		// Hash on ports too, or every flow between the same two hosts takes one tunnel.
		st.Commands = append(st.Commands, "sysctl -qw net.ipv4.fib_multipath_hash_policy=1")
		if h.HashPolicy != "" {
			st.Undo = append([]string{shell.Join("sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy="+h.HashPolicy)}, st.Undo...)
		}
	}
	for _, r := range h.Routes {
		if r.Table != "main" || !slices.Contains(nets, r.Dst) {
			continue
		}
		argv := []string{"ip", "route", "replace", r.Dst}
		if r.Metric > 0 {
			argv = append(argv, "metric", strconv.Itoa(r.Metric))
		}
		old := append(slices.Clone(argv), "dev", a.iface)
		if r.Scope != "" && r.Scope != "link" {
			old = append(old, "scope", r.Scope)
		}
		if r.PrefSrc != "" {
			old = append(old, "src", r.PrefSrc)
		}
		if r.Protocol != "" && r.Protocol != "boot" {
			old = append(old, "proto", r.Protocol)
		}
		for _, d := range devs {
			argv = append(argv, "nexthop", "dev", d, "weight", "1")
		}
		st.Commands = append(st.Commands, shell.Join(argv[0], argv[1:]...))
		st.Undo = append([]string{shell.Join(old[0], old[1:]...)}, st.Undo...)
	}
	if a.ports != nil {
		st.Summary += fmt.Sprintf(", ports %d,%s (chosen so the bond's hash spreads them)", wg.ListenPort, joinPorts(a.ports))
	} else {
		st.Summary += fmt.Sprintf(", ports %d..%d", wg.ListenPort, wg.ListenPort+a.tunnels-1)
	}
	if len(nets) > 0 {
		st.Summary += ", routing " + strings.Join(nets, ", ") + " over all of them"
	}
	st.Notes = append(st.Notes,
		"the new tunnels' private keys are derived on this host from "+a.iface+"'s and never leave it; their peers are the other end's new "+
			"tunnels, whose half goes with this one (wgperf fix ecmp --server applies both, rolled back together)",
		"runtime only: a restart of the host or of "+a.iface+" drops the new tunnels; keep them in wg-quick configs (wgperf fix ecmp without --server prints them)")
	return st, nil
}

// ownTunnelPrefix is iface's IPv4 address with its subnet's length, from
// its connected route ("10.77.0.0/24 dev wg0 proto kernel scope link src
// 10.77.0.1").
func ownTunnelPrefix(routes []facts.Route, iface string) (netip.Prefix, error) {
	for _, r := range routes {
		if r.Dev != iface || r.Protocol != "kernel" || r.PrefSrc == "" || r.Table != "main" {
			continue
		}
		dst, err1 := netip.ParsePrefix(r.Dst)
		src, err2 := netip.ParseAddr(r.PrefSrc)
		if err1 == nil && err2 == nil && src.Is4() && dst.Contains(src) {
			return netip.PrefixFrom(src, dst.Bits()), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("%s has no IPv4 subnet route of its own (ip -j route): the new tunnels' addresses are derived from its address", iface)
}

// ecmpNetworks are the networks the main table routes over iface alone,
// besides its own subnet: the routes the multipath route replaces.
func ecmpNetworks(routes []facts.Route, iface string, own netip.Prefix) []string {
	var out []string
	for _, r := range routes {
		if r.Table != "main" || r.Dev != iface || r.Protocol == "kernel" || r.Dst == "default" || r.Gateway != "" {
			continue
		}
		p, err := netip.ParsePrefix(r.Dst)
		if err != nil || !p.Addr().Is4() || p.Overlaps(own.Masked()) {
			continue
		}
		out = append(out, r.Dst)
	}
	return out
}

// PeerTunnelAddr is the other end's tunnel address: the /32 among its
// peer's allowed IPs inside this end's tunnel subnet (own, this end's
// address with the subnet's length) that is not this end's own address. An
// error says there is none (allowed IPs that hold only the whole subnet, or
// only networks): the other end's addresses on the new tunnels are derived
// from it, and a guess that is wrong leaves them out of every tunnel's
// allowed IPs, so the flows the other end starts would be dropped. The
// change on a running host (PlanECMPHalf) and the configs to install by
// hand (fix.PlanECMP) both take it from here. It is pure.
func PeerTunnelAddr(iface string, allowed []string, own netip.Prefix) (netip.Addr, error) {
	for _, a := range allowed {
		if p, err := netip.ParsePrefix(a); err == nil && p.Bits() == 32 && own.Masked().Contains(p.Addr()) && p.Addr() != own.Addr() {
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%s's peer has no /32 inside %s among its allowed IPs (%s): the other end's tunnel addresses are derived from it",
		iface, own.Masked(), strings.Join(allowed, ", "))
}

// ECMPAddress is tunnel i's address, p's moved i subnets up in the third
// octet: 10.77.0.1/24 -> 10.77.1.1/24 (both ends' tunnels are numbered so).
func ECMPAddress(p netip.Prefix, i int) (netip.Prefix, error) {
	a := p.Addr().As4()
	if int(a[2])+i > 255 {
		return netip.Prefix{}, fmt.Errorf("cannot derive tunnel address %d from %s", i, p)
	}
	a[2] += byte(i)
	return netip.PrefixFrom(netip.AddrFrom4(a), p.Bits()), nil
}
