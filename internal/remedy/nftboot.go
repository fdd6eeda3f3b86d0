package remedy

import (
	"context"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// What loads a chain file of wgperf's at boot on a Linux host that is not
// OpenWrt: nftables.service runs "nft -f" on /etc/nftables.conf (Debian,
// Ubuntu, Arch) or /etc/sysconfig/nftables.conf (Fedora, RHEL), and only
// when it is enabled (Debian ships it disabled). firewalld, Fedora's and
// RHEL's default, conflicts with nftables.service and never reads either
// file: a rule it should keep is a direct rule of its own.

// FirewallBootLine is the shell line that tells how the host loads its
// firewall at boot: nftables.service, iptables-persistent's
// netfilter-persistent.service (Debian), iptables.service (RHEL's
// iptables-services), firewalld.
const FirewallBootLine = `command -v systemctl >/dev/null 2>&1 || { echo nosystemd; exit 0; }
echo "nftables $(systemctl is-enabled nftables.service 2>/dev/null)"
echo "netfilter-persistent $(systemctl is-enabled netfilter-persistent.service 2>/dev/null)"
echo "iptables $(systemctl is-enabled iptables.service 2>/dev/null)"
echo "firewalld $(systemctl is-enabled firewalld.service 2>/dev/null) $(systemctl is-active firewalld.service 2>/dev/null)"`

// NftBoot is how a host loads nftables at boot.
type NftBoot struct {
	Systemd  bool
	Nftables string // systemctl is-enabled nftables.service: enabled, disabled, masked, "" (no unit)
	// NetfilterPersistent and Iptables are the same for iptables-persistent's
	// and iptables-services' units.
	NetfilterPersistent, Iptables string
	Firewalld                     bool // firewalld is enabled or running
	// Conf is the file nftables.service loads.
	Conf string
}

// parseNftBoot reads NftBootLine's output; sysconfig is whether
// /etc/sysconfig/nftables.conf exists (the Fedora/RHEL unit's file). Pure.
func parseNftBoot(out string, sysconfig bool) NftBoot {
	b := NftBoot{Conf: "/etc/nftables.conf"}
	if sysconfig {
		b.Conf = "/etc/sysconfig/nftables.conf"
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		state := ""
		if len(f) > 1 && wordRE.MatchString(f[1]) {
			state = f[1]
		}
		switch f[0] {
		case "nftables":
			b.Systemd = true
			b.Nftables = state
		case "netfilter-persistent":
			b.NetfilterPersistent = state
		case "iptables":
			b.Iptables = state
		case "firewalld":
			b.Systemd = true
			for _, s := range f[1:] {
				if s == "enabled" || s == "active" || s == "activating" || s == "enabled-runtime" {
					b.Firewalld = true
				}
			}
		}
	}
	return b
}

// enabled reports whether nftables.service runs at boot.
func (b NftBoot) enabled() bool { return b.Systemd && runsAtBoot(b.Nftables) }

// runsAtBoot reads systemctl is-enabled.
func runsAtBoot(state string) bool {
	return state == "enabled" || state == "enabled-runtime" || state == "static" || state == "alias"
}

// readNftBoot asks the host.
func readNftBoot(ctx context.Context, env *Env) (NftBoot, error) {
	out, err := env.sh(ctx, FirewallBootLine)
	if err != nil {
		return NftBoot{}, err
	}
	sys, err := env.exists(ctx, env.Path("/etc/sysconfig/nftables.conf"))
	if err != nil {
		return NftBoot{}, err
	}
	return parseNftBoot(string(out), sys), nil
}

// firewalldRules are the direct rules that keep iptables rules (table, and
// "CHAIN args" without -A) under firewalld, for IPv4 and IPv6.
func firewalldRules(table string, rules []string) []string {
	var out []string
	for _, fam := range []string{"ipv4", "ipv6"} {
		for _, r := range rules {
			chain, args, _ := strings.Cut(r, " ")
			out = append(out, "firewall-cmd --permanent --direct --add-rule "+fam+" "+table+" "+chain+" 0 "+args)
		}
	}
	return append(out, "firewall-cmd --reload")
}

// nftBootNote says whether the chain file at path lasts, for the plan, and
// whether the include goes into b.Conf.
func nftBootNote(b NftBoot, path, iptTable string, iptRules []string) (note string, include bool) {
	inc := shell.Join("printf", `\n# wgperf fix: its own table\ninclude "%s"\n`, Dir(path)+"/*.nft")
	switch {
	case b.Firewalld:
		return "runtime only: firewalld manages this host's firewall and loads no nftables file at boot; to keep it: " +
			strings.Join(firewalldRules(iptTable, iptRules), " && "), false
	case !b.Systemd:
		return "runtime only: no systemd here, so nothing wgperf knows loads " + b.Conf + " at boot; to keep it: add " +
			shell.Quote(`include "`+Dir(path)+`/*.nft"`) + " to the file your init system loads with nft -f", false
	case b.Nftables == "masked":
		return "runtime only: nftables.service is masked, so nothing loads " + b.Conf + " at boot; to keep it: " +
			inc + " >> " + b.Conf + " && systemctl unmask nftables.service && systemctl enable nftables.service", false
	case !b.enabled():
		state := b.Nftables
		if state == "" {
			state = "not installed"
		}
		return fmt.Sprintf("runtime only: nftables.service is %s, so nothing loads %s at boot; to keep it: %s >> %s && systemctl enable nftables.service "+
			"(it then runs nft -f %s at every boot: check that file first, Debian's starts with flush ruleset)", state, b.Conf, inc, b.Conf, b.Conf), false
	}
	return fmt.Sprintf("persists: nftables.service is %s and runs nft -f %s at boot, which includes %s", b.Nftables, b.Conf, Dir(path)+"/*.nft"), true
}

// iptablesBoot adds rules (iptables arguments without -A, in table) to the
// file the host's iptables loader restores at boot when that loader is
// enabled: iptables-persistent's netfilter-persistent.service restores
// /etc/iptables/rules.v4 (Debian, Ubuntu), iptables-services' iptables.service
// /etc/sysconfig/iptables (Fedora, RHEL). Otherwise the step says "runtime
// only" and what would keep the rules.
func iptablesBoot(ctx context.Context, env *Env, st *Step, table string, rules []string) error {
	b, err := readNftBoot(ctx, env)
	if err != nil {
		st.Notes = append(st.Notes, fmt.Sprintf("runtime only: the plan could not tell what restores iptables rules at boot (%v); save them where your boot restores them", err))
		return nil
	}
	var file, unit string
	switch {
	case b.Firewalld:
		st.Notes = append(st.Notes, "runtime only: firewalld manages this host's firewall and restores no iptables file at boot; to keep it: "+
			strings.Join(firewalldRules(table, rules), " && "))
		return nil
	case b.Systemd && runsAtBoot(b.NetfilterPersistent):
		file, unit = "/etc/iptables/rules.v4", "netfilter-persistent.service (iptables-persistent)"
	case b.Systemd && runsAtBoot(b.Iptables):
		file, unit = "/etc/sysconfig/iptables", "iptables.service (iptables-services)"
	}
	if file != "" {
		if ok, err := env.exists(ctx, env.Path(file)); err != nil {
			return err
		} else if !ok {
			file = ""
		}
	}
	if file == "" {
		st.Notes = append(st.Notes, "runtime only: neither netfilter-persistent.service (iptables-persistent) nor iptables.service (iptables-services) "+
			"is enabled with its rules file, so nothing restores these rules at boot; to keep them: apt install iptables-persistent "+
			"(Debian, Ubuntu: it saves the rules now) or dnf install iptables-services && iptables-save > /etc/sysconfig/iptables && systemctl enable iptables.service (Fedora, RHEL)")
		return nil
	}
	path := env.Path(file)
	fc, err := env.change(ctx, path, func(old []byte, _ bool) ([]byte, error) {
		return addIptablesRules(old, table, rules), nil
	})
	if err != nil {
		return err
	}
	if fc != nil {
		st.Files = append(st.Files, *fc)
	}
	st.Notes = append(st.Notes, fmt.Sprintf("persists: %s is %s and restores %s at boot", unit, "enabled", file))
	return nil
}

// addIptablesRules puts "-A RULE" lines into the *table section of an
// iptables-save file, before its COMMIT (a section of its own at the end
// when there is none); a rule already there is not added again. Pure.
func addIptablesRules(old []byte, table string, rules []string) []byte {
	lines := splitLines(string(old))
	have := map[string]bool{}
	for _, l := range lines {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, r := range rules {
		if l := "-A " + r; !have[l] {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return old
	}
	in := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "*") {
			in = t == "*"+table
		}
		if in && t == "COMMIT" {
			lines = append(lines[:i], append(add, lines[i:]...)...)
			return []byte(strings.Join(lines, "\n") + "\n")
		}
	}
	lines = append(lines, "*"+table)
	lines = append(lines, add...)
	lines = append(lines, "COMMIT")
	return []byte(strings.Join(lines, "\n") + "\n")
}
