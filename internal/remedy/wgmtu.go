package remedy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindWGMTU = "wg-mtu" // interface, mtu; optional uci_section (OpenWrt, when not the interface name)
)

// wgMTU sets a WireGuard interface's MTU now, in its wg-quick config when it
// has one, and in uci on OpenWrt.
type wgMTU struct {
	iface      string
	mtu        int
	uciSection string // OpenWrt network section of the interface; "" when none can be
}

// WGMTU sets a WireGuard interface's MTU (1280..9000: IPv6 needs 1280).
// The display persists it where platform keeps it: wg-quick's [Interface]
// on Linux, uci section uciSection (the device name when "") on OpenWrt, and
// both when the platform is Unknown.
func WGMTU(iface string, mtu int, platform Platform, uciSection string) (Remedy, error) {
	a, err := newWGMTU(iface, mtu, uciSection)
	if err != nil {
		return nil, err
	}
	uciSection = a.uciSection
	m := strconv.Itoa(mtu)
	ip := shell.Join("ip", "link", "set", "dev", iface, "mtu", m)
	wgQuick := finding.ConfigSnippet{Path: "/etc/wireguard/" + iface + ".conf [Interface]", Lines: []string{"MTU = " + m}}
	if uciSection == "" {
		// No uci section can be called like this device: wg-quick only.
		return shown{a, []string{ip}, []finding.ConfigSnippet{wgQuick}}, nil
	}
	uciCmd := shell.Join("uci", "set", "network."+uciSection+".mtu="+m)
	uciConf := finding.ConfigSnippet{Path: "/etc/config/network (interface " + uciSection + ")", Lines: []string{"option mtu '" + m + "'"}}
	switch platform {
	case OpenWrt:
		return shown{a, []string{ip, uciCmd, "uci commit network"}, []finding.ConfigSnippet{uciConf}}, nil
	case Linux:
		return shown{a, []string{ip}, []finding.ConfigSnippet{wgQuick}}, nil
	}
	return shown{a, []string{ip, "# on OpenWrt also: " + uciCmd + " && uci commit network"}, []finding.ConfigSnippet{wgQuick, uciConf}}, nil
}

func newWGMTU(iface string, mtu int, uciSection string) (*wgMTU, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if mtu < 1280 || mtu > 9000 {
		return nil, fmt.Errorf("mtu %d: want 1280..9000 (IPv6 needs at least 1280)", mtu)
	}
	uciSection, err := uciSectionOf(iface, uciSection)
	if err != nil {
		return nil, err
	}
	return &wgMTU{iface: iface, mtu: mtu, uciSection: uciSection}, nil
}

func parseWGMTU(p params) (Remedy, error) {
	iface, err := p.get("interface")
	if err != nil {
		return nil, err
	}
	mtu, err := p.int("mtu")
	if err != nil {
		return nil, err
	}
	return WGMTU(iface, mtu, Unknown, strings.TrimSpace(p["uci_section"]))
}

// Params names the uci section only when it is not the interface's name, as
// for a device whose network section is called otherwise.
func (a *wgMTU) Params() map[string]string {
	p := map[string]string{"interface": a.iface, "mtu": strconv.Itoa(a.mtu)}
	if a.uciSection != "" && a.uciSection != a.iface {
		p["uci_section"] = a.uciSection
	}
	return p
}

func (a *wgMTU) Kind() string { return KindWGMTU }

func (a *wgMTU) Describe() string {
	return fmt.Sprintf("set the MTU of %s to %d so tunnel packets fit the narrowest underlay link", a.iface, a.mtu)
}

func (a *wgMTU) Plan(ctx context.Context, env *Env) (Step, error) {
	now, err := linkMTU(ctx, env, a.iface)
	if err != nil {
		return Step{}, err
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s MTU: %d -> %d", a.iface, now, a.mtu)}
	if now != a.mtu {
		st.Commands = append(st.Commands, shell.Join("ip", "link", "set", "dev", a.iface, "mtu", strconv.Itoa(a.mtu)))
		st.Undo = append(st.Undo, shell.Join("ip", "link", "set", "dev", a.iface, "mtu", strconv.Itoa(now)))
	}
	persisted := false
	conf := env.Path("/etc/wireguard/" + a.iface + ".conf")
	if ok, err := env.exists(ctx, conf); err != nil {
		return Step{}, err
	} else if ok {
		line := fmt.Sprintf("MTU = %d", a.mtu)
		fc, err := env.change(ctx, conf, func(old []byte, _ bool) ([]byte, error) {
			return setIniLine(old, "Interface", func(l string) bool { return iniKey(l) == "mtu" }, line)
		})
		if err != nil {
			return Step{}, err
		}
		if fc != nil {
			q := shell.Join(conf)
			fc.Edit = []string{
				`sed -i '/^\[Interface\]/,/^\[Peer\]/{/^[[:space:]]*MTU[[:space:]]*=/d}' ` + q,
				fmt.Sprintf(`sed -i '/^\[Interface\]/a %s' %s`, line, q),
			}
			st.Files = append(st.Files, *fc)
		}
		persisted = true
	}
	if env.Platform == OpenWrt && a.uciSection != "" {
		if _, err := env.T.Run(ctx, "uci", "-q", "get", "network."+a.uciSection); err == nil {
			sub, err := (&uciSet{key: "network." + a.uciSection + ".mtu", value: strconv.Itoa(a.mtu)}).Plan(ctx, env)
			if err != nil {
				return Step{}, err
			}
			st.merge(sub)
			persisted = true
		}
	}
	if !persisted {
		ok, err := a.planManaged(ctx, env, &st)
		if err != nil {
			return Step{}, err
		}
		persisted = ok
	}
	if !persisted {
		st.Notes = append(st.Notes, "runtime only: no wg-quick config, systemd-networkd .netdev, NetworkManager connection or uci section for "+a.iface+
			": set the MTU where the interface is configured")
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}

// linkMTU reads an interface's MTU from sysfs, with a clear error when it does not exist.
func linkMTU(ctx context.Context, env *Env, iface string) (int, error) {
	out, err := env.T.ReadFile(ctx, "/sys/class/net/"+iface+"/mtu")
	if err != nil {
		var te *target.Error
		if errors.As(err, &te) {
			return 0, fmt.Errorf("%s: no interface %q", env.T, iface)
		}
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// iniKey returns the lower-case key of a "Key = value" line, or "".
func iniKey(l string) string {
	k, _, ok := strings.Cut(l, "=")
	if !ok {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(k))
}

// setIniLine replaces the first line in [section] for which match is true with
// line, or inserts line right after the section header.
func setIniLine(old []byte, section string, match func(string) bool, line string) ([]byte, error) {
	lines := splitLines(string(old))
	start := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start >= 0 && strings.HasPrefix(t, "[") {
			break
		}
		if strings.EqualFold(t, "["+section+"]") {
			start = i
			continue
		}
		if start >= 0 && match(l) {
			lines[i] = line
			return []byte(strings.Join(lines, "\n") + "\n"), nil
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("no [%s] section", section)
	}
	lines = append(lines[:start+1], append([]string{line}, lines[start+1:]...)...)
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

// networkdDir holds the .netdev files of systemd-networkd an owner writes.
const networkdDir = "/etc/systemd/network"

// listNetdevs prints the .netdev files of the folder given, one a line.
const listNetdevs = `for f in "$1"/*.netdev; do [ -f "$f" ] && printf '%s\n' "$f"; done; exit 0`

// planManaged persists the MTU where systemd-networkd or NetworkManager
// makes the interface at boot: MTUBytes= in the [NetDev] section of its
// .netdev file in /etc/systemd/network (the file is restored byte for byte
// on rollback), or the wireguard.mtu of its NetworkManager connection (put
// back by nmcli on rollback). It reports whether it found either.
func (a *wgMTU) planManaged(ctx context.Context, env *Env, st *Step) (bool, error) {
	m := strconv.Itoa(a.mtu)
	if out, err := env.T.Run(ctx, "sh", "-c", listNetdevs, "sh", env.Path(networkdDir)); err == nil {
		for _, p := range splitLines(string(out)) {
			if !strings.HasPrefix(p, env.Path(networkdDir)+"/") || shell.Line("file", p) != nil {
				continue
			}
			data, err := env.T.ReadFile(ctx, p)
			if err != nil || netdevName(string(data)) != a.iface {
				continue
			}
			fc, err := env.change(ctx, p, func(old []byte, _ bool) ([]byte, error) {
				return setIniLine(old, "NetDev", func(l string) bool { return iniKey(l) == "mtubytes" }, "MTUBytes="+m)
			})
			if err != nil {
				return false, err
			}
			if fc != nil {
				st.Files = append(st.Files, *fc)
			}
			st.Notes = append(st.Notes, "persists: systemd-networkd creates "+a.iface+" from "+env.unroot(p)+" at boot, with MTUBytes="+m)
			return true, nil
		}
	}
	out, err := env.T.Run(ctx, "nmcli", "-g", "GENERAL.CONNECTION", "device", "show", a.iface)
	if err != nil {
		return false, nil // no NetworkManager, or it does not manage the interface
	}
	conn := strings.TrimSpace(string(out))
	if conn == "" || conn == "--" || shell.Line("connection", conn) != nil {
		return false, nil
	}
	cur, err := env.T.Run(ctx, "nmcli", "-g", "wireguard.mtu", "connection", "show", conn)
	if err != nil {
		return false, nil
	}
	now := strings.TrimSpace(string(cur))
	if !numberRE.MatchString(now) {
		now = "0" // NetworkManager's "auto"
	}
	if now != m {
		st.Commands = append(st.Commands, shell.Join("nmcli", "connection", "modify", conn, "wireguard.mtu", m))
		st.Undo = append([]string{shell.Join("nmcli", "connection", "modify", conn, "wireguard.mtu", now)}, st.Undo...)
	}
	st.Notes = append(st.Notes, "persists: NetworkManager activates "+a.iface+" from connection "+shell.Quote(conn)+" with wireguard.mtu "+m)
	return true, nil
}

// netdevName is the Name= of a .netdev file's [NetDev] section when its Kind
// is wireguard, else "".
func netdevName(data string) string {
	var name, kind, section string
	for _, l := range strings.Split(data, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			section = t
			continue
		}
		if section != "[NetDev]" {
			continue
		}
		switch iniKey(t) {
		case "name":
			_, v, _ := strings.Cut(t, "=")
			name = strings.TrimSpace(v)
		case "kind":
			_, v, _ := strings.Cut(t, "=")
			kind = strings.TrimSpace(v)
		}
	}
	if kind != "wireguard" {
		return ""
	}
	return name
}
