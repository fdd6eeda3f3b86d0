package remedy

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindWGPeerKeepalive = "wg-peer-keepalive" // interface, peer (its public key), seconds (1..65535)
)

// wgPeerKeepalive makes one peer of a WireGuard interface send a keepalive
// every so many seconds of silence: a side behind NAT then keeps its
// mapping open, and the far end can reach it at any time. Now with wg set,
// and where the interface is made at boot (wg-quick's [Peer], the peer's
// uci section, a systemd-networkd .netdev's [WireGuardPeer]), each peer
// found by its public key.
type wgPeerKeepalive struct {
	iface, peer string
	seconds     int
}

// WGPeerKeepalive sets iface's peer (a public key) to a keepalive every
// seconds. The display persists it as platform keeps it: wg-quick on Linux,
// uci on OpenWrt, both when Unknown.
func WGPeerKeepalive(iface, peer string, seconds int, platform Platform) (Remedy, error) {
	a, err := newWGPeerKeepalive(iface, peer, seconds)
	if err != nil {
		return nil, err
	}
	s := strconv.Itoa(seconds)
	wg := shell.Join("wg", "set", iface, "peer", peer, "persistent-keepalive", s)
	wgQuick := finding.ConfigSnippet{Path: "/etc/wireguard/" + iface + ".conf [Peer] with PublicKey = " + peer, Lines: []string{"PersistentKeepalive = " + s}}
	uciConf := finding.ConfigSnippet{Path: "/etc/config/network (the wireguard_" + iface + " section with public_key '" + peer + "')",
		Lines: []string{"option persistent_keepalive '" + s + "'"}}
	switch platform {
	case OpenWrt:
		return shown{a, []string{wg}, []finding.ConfigSnippet{uciConf}}, nil
	case Linux:
		return shown{a, []string{wg}, []finding.ConfigSnippet{wgQuick}}, nil
	}
	return shown{a, []string{wg}, []finding.ConfigSnippet{wgQuick, uciConf}}, nil
}

func newWGPeerKeepalive(iface, peer string, seconds int) (*wgPeerKeepalive, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if err := checkPublicKey(peer); err != nil {
		return nil, err
	}
	if seconds < 1 || seconds > 65535 {
		return nil, fmt.Errorf("keepalive %d s: want 1..65535", seconds)
	}
	return &wgPeerKeepalive{iface: iface, peer: peer, seconds: seconds}, nil
}

func parseWGPeerKeepalive(p params) (Remedy, error) {
	v, err := p.gets("interface", "peer")
	if err != nil {
		return nil, err
	}
	n, err := p.int("seconds")
	if err != nil {
		return nil, err
	}
	return WGPeerKeepalive(v[0], v[1], n, Unknown)
}

func (a *wgPeerKeepalive) Params() map[string]string {
	return map[string]string{"interface": a.iface, "peer": a.peer, "seconds": strconv.Itoa(a.seconds)}
}

func (a *wgPeerKeepalive) Kind() string { return KindWGPeerKeepalive }

func (a *wgPeerKeepalive) Describe() string {
	return fmt.Sprintf("make %s send its peer %s a keepalive every %d s of silence, so a NAT in front of it keeps the mapping open", a.iface, a.peer, a.seconds)
}

func (a *wgPeerKeepalive) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "wg", "show", a.iface, "persistent-keepalive")
	if err != nil {
		return Step{}, fmt.Errorf("%s: wg show %s persistent-keepalive: %w", env.T, a.iface, err)
	}
	now, ok := peerKeepalive(string(out), a.peer)
	if !ok {
		return Step{}, fmt.Errorf("%s: %s has no peer %s", env.T, a.iface, a.peer)
	}
	s := strconv.Itoa(a.seconds)
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s peer %s persistent-keepalive: %s -> %s", a.iface, a.peer, now, s)}
	if now != s {
		st.Commands = append(st.Commands, shell.Join("wg", "set", a.iface, "peer", a.peer, "persistent-keepalive", s))
		st.Undo = append(st.Undo, shell.Join("wg", "set", a.iface, "peer", a.peer, "persistent-keepalive", now))
	}
	wgKey := wgConfKey{iface: a.iface, peer: a.peer, key: "PersistentKeepalive", value: s}
	persisted, err := wgKey.planWGQuick(ctx, env, &st)
	if err != nil {
		return Step{}, err
	}
	if env.Platform == OpenWrt {
		onUCI, err := planUCIPeer(ctx, env, &st, a.iface, a.peer, [][2]string{{"persistent_keepalive", s}})
		if err != nil {
			return Step{}, err
		}
		persisted = persisted || onUCI
	}
	if !persisted {
		if persisted, err = a.planNetworkManager(ctx, env, &st, s); err != nil {
			return Step{}, err
		}
	}
	if err := wgKey.planNetdevOrRuntime(ctx, env, &st, persisted, "the peer's keepalive"); err != nil {
		return Step{}, err
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}

// peerKeepalive reads "wg show IF persistent-keepalive" (a public key, a
// tab, the seconds or "off", a line each): whether peer is there and its
// keepalive as wg set takes it back ("off" or the seconds).
func peerKeepalive(out, peer string) (string, bool) {
	v, ok := peerValue(out, peer)
	if !ok {
		return "", false
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 65535 {
		return strconv.Itoa(n), true
	}
	return "off", true
}

// nmKeyfiles is where NetworkManager keeps the connections an owner made (a
// keyfile under /run is NetworkManager's own, and gone at boot).
const nmKeyfiles = "/etc/NetworkManager/system-connections/"

// planNetworkManager persists the keepalive in the keyfile of the
// NetworkManager connection that makes the interface: persistent-keepalive=
// in its [wireguard-peer.KEY] section (nmcli has no property for one
// peer's keepalive), the file restored byte for byte on rollback;
// NetworkManager reads it when it activates the connection. It reports
// whether it found one.
func (a *wgPeerKeepalive) planNetworkManager(ctx context.Context, env *Env, st *Step, seconds string) (bool, error) {
	out, err := env.T.Run(ctx, "nmcli", "-g", "GENERAL.CONNECTION", "device", "show", a.iface)
	if err != nil {
		return false, nil // no NetworkManager, or it does not manage the interface
	}
	conn := strings.TrimSpace(string(out))
	if conn == "" || conn == "--" || shell.Line("connection", conn) != nil {
		return false, nil
	}
	out, err = env.T.Run(ctx, "nmcli", "-g", "NAME,FILENAME", "connection", "show")
	if err != nil {
		return false, nil
	}
	file := nmKeyfile(string(out), conn)
	if file == "" {
		return false, nil
	}
	section, line := "wireguard-peer."+a.peer, "persistent-keepalive="+seconds
	fc, err := env.change(ctx, env.Path(file), func(old []byte, _ bool) ([]byte, error) {
		return setIniLine(old, section, func(l string) bool { return iniKey(l) == "persistent-keepalive" }, line)
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", file, err)
	}
	if fc != nil {
		fc.Edit = iniEdit(fc.Path, section, "", "persistent-keepalive", line)
		st.Files = append(st.Files, *fc)
	}
	st.Notes = append(st.Notes, "persists: NetworkManager activates "+a.iface+" from "+file+" ("+shell.Quote(conn)+") with "+line)
	return true, nil
}

// nmKeyfile is conn's keyfile among "nmcli -g NAME,FILENAME connection
// show" (name and path separated by a colon, a colon inside either escaped
// with a backslash), "" unless it is an owner's keyfile.
func nmKeyfile(list, conn string) string {
	for _, l := range splitLines(list) {
		fields := splitNMCLI(l)
		if len(fields) != 2 || fields[0] != conn {
			continue
		}
		p := fields[1]
		if !strings.HasPrefix(p, nmKeyfiles) || strings.Contains(p, "/../") || shell.Line("file", p) != nil {
			return ""
		}
		return p
	}
	return ""
}

// splitNMCLI splits one line of nmcli's terse output at its unescaped colons.
func splitNMCLI(l string) []string {
	var out []string
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			i++
			b.WriteByte(l[i])
		case l[i] == ':':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(l[i])
		}
	}
	return append(out, b.String())
}
