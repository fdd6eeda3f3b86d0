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
	KindWGListenPort = "wg-listen-port" // interface, port; optional uci_section (OpenWrt, when not the interface name)
)

// wgListenPort moves a WireGuard interface to another listen port: now with
// wg set, and where the interface is made at boot (wg-quick's [Interface],
// uci's listen_port, a systemd-networkd .netdev's [WireGuard]). Every peer
// that reaches this end at the old port must follow (KindWGPeerEndpoint): on
// its own it cuts those peers off, which is why doctor applies the two as
// one.
type wgListenPort struct {
	iface      string
	port       int
	uciSection string
}

// WGListenPort sets iface's listen port (1..65535). The display persists it
// as platform keeps it, like WGMTU: wg-quick on Linux, uci on OpenWrt, both
// when the platform is Unknown.
func WGListenPort(iface string, port int, platform Platform, uciSection string) (Remedy, error) {
	a, err := newWGListenPort(iface, port, uciSection)
	if err != nil {
		return nil, err
	}
	p := strconv.Itoa(port)
	wg := shell.Join("wg", "set", iface, "listen-port", p)
	wgQuick := finding.ConfigSnippet{Path: "/etc/wireguard/" + iface + ".conf [Interface]", Lines: []string{"ListenPort = " + p}}
	if a.uciSection == "" {
		return shown{a, []string{wg}, []finding.ConfigSnippet{wgQuick}}, nil
	}
	uciCmd := shell.Join("uci", "set", "network."+a.uciSection+".listen_port="+p)
	uciConf := finding.ConfigSnippet{Path: "/etc/config/network (interface " + a.uciSection + ")", Lines: []string{"option listen_port '" + p + "'"}}
	switch platform {
	case OpenWrt:
		return shown{a, []string{wg, uciCmd, "uci commit network"}, []finding.ConfigSnippet{uciConf}}, nil
	case Linux:
		return shown{a, []string{wg}, []finding.ConfigSnippet{wgQuick}}, nil
	}
	return shown{a, []string{wg, "# on OpenWrt also: " + uciCmd + " && uci commit network"}, []finding.ConfigSnippet{wgQuick, uciConf}}, nil
}

func newWGListenPort(iface string, port int, uciSection string) (*wgListenPort, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("listen port %d: want 1..65535", port)
	}
	uciSection, err := uciSectionOf(iface, uciSection)
	if err != nil {
		return nil, err
	}
	return &wgListenPort{iface: iface, port: port, uciSection: uciSection}, nil
}

func parseWGListenPort(p params) (Remedy, error) {
	iface, err := p.get("interface")
	if err != nil {
		return nil, err
	}
	port, err := p.int("port")
	if err != nil {
		return nil, err
	}
	return WGListenPort(iface, port, Unknown, strings.TrimSpace(p["uci_section"]))
}

// Params names the uci section only when it is not the interface's name.
func (a *wgListenPort) Params() map[string]string {
	p := map[string]string{"interface": a.iface, "port": strconv.Itoa(a.port)}
	if a.uciSection != "" && a.uciSection != a.iface {
		p["uci_section"] = a.uciSection
	}
	return p
}

func (a *wgListenPort) Kind() string { return KindWGListenPort }

func (a *wgListenPort) Describe() string {
	return fmt.Sprintf("move %s to listen port %d, out of the path's rule for its old port (its peers' endpoints must follow)", a.iface, a.port)
}

func (a *wgListenPort) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "wg", "show", a.iface, "listen-port")
	if err != nil {
		return Step{}, fmt.Errorf("%s: wg show %s listen-port: %w", env.T, a.iface, err)
	}
	now, err := parseListenPort(string(out))
	if err != nil {
		return Step{}, fmt.Errorf("%s: wg show %s listen-port: %w", env.T, a.iface, err)
	}
	p := strconv.Itoa(a.port)
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s listen port: %d -> %d", a.iface, now, a.port)}
	if now != a.port {
		st.Commands = append(st.Commands, shell.Join("wg", "set", a.iface, "listen-port", p))
		st.Undo = append(st.Undo, shell.Join("wg", "set", a.iface, "listen-port", strconv.Itoa(now)))
		st.Notes = append(st.Notes, bothHalves)
	}
	wgKey := wgConfKey{iface: a.iface, key: "ListenPort", value: p}
	persisted, err := wgKey.planWGQuick(ctx, env, &st)
	if err != nil {
		return Step{}, err
	}
	if env.Platform == OpenWrt && a.uciSection != "" {
		if _, err := env.T.Run(ctx, "uci", "-q", "get", "network."+a.uciSection); err == nil {
			sub, err := (&uciSet{key: "network." + a.uciSection + ".listen_port", value: p}).Plan(ctx, env)
			if err != nil {
				return Step{}, err
			}
			st.merge(sub)
			persisted = true
		}
	}
	if err := wgKey.planNetdevOrRuntime(ctx, env, &st, persisted, "the listen port"); err != nil {
		return Step{}, err
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}

// bothHalves is said by each half of a port move: alone it cuts the tunnel.
const bothHalves = "one half of a port move: the other end's half must follow at once, or the tunnel is cut " +
	"(wgperf doctor --fix applies both as one, rolled back together)"

// parseListenPort reads "wg show IF listen-port": the port, 0 when the
// interface has none yet (wg picks one when it first sends).
func parseListenPort(out string) (int, error) {
	s := strings.TrimSpace(out)
	n, err := strconv.Atoi(s)
	if err != nil || !numberRE.MatchString(s) || n > 65535 {
		return 0, fmt.Errorf("unexpected output %q", shell.Terminal(s))
	}
	return n, nil
}

// wgConfKey is one key of a WireGuard interface's ini-style config: of the
// interface itself, or of the peer whose PublicKey is peer. wg-quick keeps it
// in /etc/wireguard/IFACE.conf ([Interface], [Peer]), systemd-networkd in
// the .netdev that makes IFACE ([WireGuard], [WireGuardPeer]).
type wgConfKey struct {
	iface, peer string // peer: "" for the interface's own key
	key, value  string // e.g. "ListenPort", "51821"
}

// set edits old's key in section: the interface's (the first such section)
// or the peer's.
func (k wgConfKey) set(old []byte, section, line string) ([]byte, error) {
	match := func(l string) bool { return iniKey(l) == strings.ToLower(k.key) }
	if k.peer == "" {
		return setIniLine(old, section, match, line)
	}
	return setPeerLine(old, section, k.peer, match, line)
}

// planWGQuick adds the key's edit of the wg-quick config to st when the
// interface has one, and says whether it did.
func (k wgConfKey) planWGQuick(ctx context.Context, env *Env, st *Step) (bool, error) {
	conf := env.Path("/etc/wireguard/" + k.iface + ".conf")
	ok, err := env.exists(ctx, conf)
	if err != nil || !ok {
		return false, err
	}
	section := map[bool]string{true: "Interface", false: "Peer"}[k.peer == ""]
	line := k.key + " = " + k.value
	fc, err := env.change(ctx, conf, func(old []byte, _ bool) ([]byte, error) { return k.set(old, section, line) })
	if err != nil {
		return false, fmt.Errorf("%s: %w", conf, err)
	}
	if fc != nil {
		fc.Edit = iniEdit(conf, section, k.peer, k.key, line)
		st.Files = append(st.Files, *fc)
	}
	return true, nil
}

// planNetdevOrRuntime, where nothing else keeps the key (persisted false),
// adds its edit of the systemd-networkd .netdev that makes the interface, or
// else says the change is runtime only; what names the key for people.
func (k wgConfKey) planNetdevOrRuntime(ctx context.Context, env *Env, st *Step, persisted bool, what string) error {
	if persisted {
		return nil
	}
	section := map[bool]string{true: "WireGuard", false: "WireGuardPeer"}[k.peer == ""]
	line := k.key + "=" + k.value
	fc, path, err := changeNetdev(ctx, env, k.iface, func(old []byte) ([]byte, error) { return k.set(old, section, line) })
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if path == "" {
		st.Notes = append(st.Notes, "runtime only: no wg-quick config, systemd-networkd .netdev or uci section for "+k.iface+
			": set "+what+" where the interface is configured, or the next restart puts the old one back")
		return nil
	}
	if fc != nil {
		fc.Edit = iniEdit(fc.Path, section, k.peer, k.key, line)
		st.Files = append(st.Files, *fc)
	}
	st.Notes = append(st.Notes, "persists: systemd-networkd creates "+k.iface+" from "+env.unroot(path)+" at boot, with "+line)
	return nil
}

// changeNetdev edits the systemd-networkd .netdev that makes iface, when one
// does: its path ("" when none), and the change (nil when already so).
func changeNetdev(ctx context.Context, env *Env, iface string, edit func(old []byte) ([]byte, error)) (*FileChange, string, error) {
	out, err := env.T.Run(ctx, "sh", "-c", listNetdevs, "sh", env.Path(networkdDir))
	if err != nil {
		return nil, "", nil // no systemd-networkd folder
	}
	for _, p := range splitLines(string(out)) {
		if !strings.HasPrefix(p, env.Path(networkdDir)+"/") || shell.Line("file", p) != nil {
			continue
		}
		data, err := env.T.ReadFile(ctx, p)
		if err != nil || netdevName(string(data)) != iface {
			continue
		}
		fc, err := env.change(ctx, p, func(old []byte, _ bool) ([]byte, error) { return edit(old) })
		return fc, p, err
	}
	return nil, "", nil
}

// setPeerLine replaces the line for which match is true in the peer section
// (header section, "Peer" or "WireGuardPeer") whose PublicKey is key, or
// inserts line right after that section's header.
func setPeerLine(old []byte, section, key string, match func(string) bool, line string) ([]byte, error) {
	lines := splitLines(string(old))
	start, end := -1, len(lines)
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if !strings.EqualFold(t, "["+section+"]") {
			continue
		}
		j := i + 1
		found := false
		for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "["); j++ {
			if iniKey(lines[j]) == "publickey" {
				_, v, _ := strings.Cut(lines[j], "=")
				found = found || strings.TrimSpace(v) == key
			}
		}
		if found {
			start, end = i, j
			break
		}
		i = j - 1
	}
	if start < 0 {
		return nil, fmt.Errorf("no [%s] section with PublicKey %s", section, key)
	}
	for i := start + 1; i < end; i++ {
		if match(lines[i]) {
			lines[i] = line
			return []byte(strings.Join(lines, "\n") + "\n"), nil
		}
	}
	lines = append(lines[:start+1], append([]string{line}, lines[start+1:]...)...)
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

// iniEdit is the shell that makes setIniLine's (peerKey "") or
// setPeerLine's edit in place, for the printed script: the file holds keys,
// so it is never printed whole. awk reads the file twice: first to find the
// section (the first [section], or the one whose PublicKey is peerKey) and
// whether it has the key, then to write it.
func iniEdit(path, section, peerKey, key, line string) []string {
	const prog = `FNR == 1 { s = 0 }
/^[[:space:]]*\[/ { s++; h = tolower($0); gsub(/[[:space:]]/, "", h) }
NR == FNR {
  if (h == sec && t == 0 && pk == "") t = s
  if (h == sec && pk != "" && tolower($0) ~ /^[[:space:]]*publickey[[:space:]]*=/) { v = $0; sub(/^[^=]*=[[:space:]]*/, "", v); sub(/[[:space:]]+$/, "", v); if (v == pk) t = s }
  if (tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=") has[s] = 1
  next
}
s == t && tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=" { print l; next }
{ print }
s == t && /^[[:space:]]*\[/ && !has[t] { print l }`
	tmp := path + ".wgperf"
	return []string{shell.Join("awk", "-v", "sec=["+strings.ToLower(section)+"]", "-v", "pk="+peerKey, "-v", "k="+strings.ToLower(key), "-v", "l="+line, prog, path, path) +
		" > " + shell.Join(tmp) + " && cat " + shell.Join(tmp) + " > " + shell.Join(path) + " && rm -f " + shell.Join(tmp)}
}
