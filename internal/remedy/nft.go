package remedy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// NftTable is the nftables table wgperf owns; every firewall fix is a chain in it.
const NftTable = "wgperf"

// nftChain is a base chain of our own in "table inet wgperf", loaded from a
// file so the same text is the runtime change and the persistent config.
type nftChain struct {
	name   string   // chain name, unique per action and interface
	hook   string   // "type filter hook postrouting priority mangle; policy accept;"
	rules  []string // without the comment
	marker string   // comment on every rule; its presence means "already in place"
}

// text renders the chain as an nft -f file.
func (c nftChain) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by wgperf fix; delete this file and run: nft delete chain inet %s %s\n", NftTable, c.name)
	fmt.Fprintf(&b, "table inet %s {\n\tchain %s {\n\t\t%s\n", NftTable, c.name, c.hook)
	for _, r := range c.rules {
		fmt.Fprintf(&b, "\t\t%s comment %q\n", r, c.marker)
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

// nftFile is where the chain persists: fw4 loads ruleset-post on OpenWrt; on
// other systems /etc/nftables.conf gets an include of our folder.
func (c nftChain) file(env *Env) string {
	if env.Platform == OpenWrt {
		return env.Path("/usr/share/nftables.d/ruleset-post/90-wgperf-" + c.name + ".nft")
	}
	return env.Path("/etc/wgperf/nft/" + c.name + ".nft")
}

// plan loads the chain (replacing a different chain of the same name, whose
// exact text the undo puts back) and writes its file.
func (c nftChain) plan(ctx context.Context, env *Env, st *Step) error {
	tableOut, tableErr := env.T.Run(ctx, "nft", "list", "table", "inet", NftTable)
	tableExists := tableErr == nil
	if tableErr != nil && !isMissingObject(tableErr) {
		return tableErr
	}
	var current string
	if tableExists && strings.Contains(string(tableOut), "chain "+c.name+" {") {
		out, err := env.T.Run(ctx, "nft", "list", "chain", "inet", NftTable, c.name)
		if err != nil {
			return err
		}
		current = string(out)
	}
	path := c.file(env)
	fc, err := env.change(ctx, path, func([]byte, bool) ([]byte, error) { return []byte(c.text()), nil })
	if err != nil {
		return err
	}
	if fc != nil {
		fc.Edit = []string{"mkdir -p " + target.Quote(Dir(path)), Heredoc(path, fc.New)}
		st.Files = append(st.Files, *fc)
	}
	if env.Platform != OpenWrt {
		conf := env.Path("/etc/nftables.conf")
		ok, err := env.exists(ctx, conf)
		if err != nil {
			return err
		}
		include := fmt.Sprintf("include %q", env.Path("/etc/wgperf/nft")+"/*.nft")
		if ok {
			fc, err := env.change(ctx, conf, func(old []byte, _ bool) ([]byte, error) {
				if strings.Contains(string(old), include) {
					return old, nil
				}
				return append(append([]byte{}, old...), []byte("\n# wgperf fix: its own table\n"+include+"\n")...), nil
			})
			if err != nil {
				return err
			}
			if fc != nil {
				fc.Edit = []string{fmt.Sprintf("printf '\\n# wgperf fix: its own table\\n%%s\\n' %s >> %s", target.Quote(include), target.Quote(conf))}
				st.Files = append(st.Files, *fc)
			}
		} else {
			st.Notes = append(st.Notes, "no /etc/nftables.conf: load "+path+" at boot with nft -f")
		}
	}
	if current != "" && countRules(current, c.marker) == len(c.rules) && countRules(current, "comment") == len(c.rules) {
		return nil // runtime already in place
	}
	chain := fmt.Sprintf("inet %s %s", NftTable, c.name)
	if current != "" {
		st.Commands = append(st.Commands, "nft delete chain "+chain)
	}
	st.Commands = append(st.Commands, "nft -f "+target.Quote(path))
	st.Undo = append(st.Undo, "nft delete chain "+chain)
	if current != "" {
		st.Undo = append(st.Undo, "nft -f - <<'WGPERF_EOF'\n"+strings.TrimRight(current, "\n")+"\nWGPERF_EOF")
	}
	if !tableExists {
		// Only remove the table when no other chain of ours is left in it.
		st.Undo = append(st.Undo, fmt.Sprintf("nft list table inet %s | grep -q '^[[:space:]]*chain ' || nft delete table inet %s", NftTable, NftTable))
	}
	return nil
}

// isMissingObject reports an nft "No such file or directory" for a table or chain.
func isMissingObject(err error) bool {
	var te *target.Error
	return errors.As(err, &te) && strings.Contains(te.Stderr, "No such file or directory")
}

func countRules(listing, substr string) int {
	n := 0
	for _, l := range strings.Split(listing, "\n") {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

// mssClamp rewrites the MSS of TCP SYNs leaving through the tunnel so TCP never
// sends segments the tunnel cannot carry (PMTUD black holes, site-to-site tunnels).
type mssClamp struct{ oif, mss string }

// MSSClamp clamps the MSS of TCP SYNs leaving oif: to the route MTU when mss
// is 0, else to mss (536..9000). The display adds the rule to a table of
// wgperf's own, so it never edits the user's tables.
func MSSClamp(oif string, mss int) (Remedy, error) {
	if err := checkIface("interface", oif); err != nil {
		return nil, err
	}
	a := &mssClamp{oif: oif, mss: "pmtu"}
	set, ipt := "rt mtu", "--clamp-mss-to-pmtu"
	if mss != 0 {
		if mss < 536 || mss > 9000 {
			return nil, fmt.Errorf("mss %d: want 536..9000, or 0 for the route MTU", mss)
		}
		a.mss = strconv.Itoa(mss)
		set = a.mss
	}
	iptArgs := []string{"-t", "mangle", "-A", "FORWARD", "-o", oif, "-p", "tcp", "--tcp-flags", "SYN,RST", "SYN", "-j", "TCPMSS", ipt}
	if mss != 0 {
		iptArgs = append(iptArgs[:len(iptArgs)-1], "--set-mss", a.mss)
	}
	cmds := []string{
		"nft add table inet wgperf",
		target.Quote("nft", "add chain inet wgperf forward { type filter hook forward priority mangle; }"),
		target.Quote("nft", fmt.Sprintf(`add rule inet wgperf forward oifname "%s" tcp flags syn / syn,rst tcp option maxseg size set %s`, oif, set)),
		"# or, with iptables: " + target.Quote("iptables", iptArgs...),
	}
	cfg := []finding.ConfigSnippet{{
		Path: "/etc/nftables.conf",
		Lines: []string{
			"table inet wgperf {",
			"\tchain forward {",
			"\t\ttype filter hook forward priority mangle;",
			fmt.Sprintf("\t\toifname %q tcp flags syn / syn,rst tcp option maxseg size set %s", oif, set),
			"\t}",
			"}",
		},
	}}
	return shown{a, cmds, cfg}, nil
}

func parseMSSClamp(p params) (Remedy, error) {
	oif, err := p.get("oif")
	if err != nil {
		return nil, err
	}
	mss := 0
	if v := strings.TrimSpace(p["mss"]); v != "" && v != "pmtu" {
		if mss, err = p.int("mss"); err != nil {
			return nil, fmt.Errorf("%w (or pmtu)", err)
		}
	}
	return MSSClamp(oif, mss)
}

func (a *mssClamp) Params() map[string]string { return map[string]string{"oif": a.oif, "mss": a.mss} }

func (a *mssClamp) Kind() string { return "mss-clamp" }

func (a *mssClamp) Describe() string {
	if a.mss == "pmtu" {
		return fmt.Sprintf("clamp the MSS of TCP SYNs leaving %s to the route MTU, so PMTUD black holes cannot stall TCP", a.oif)
	}
	return fmt.Sprintf("clamp the MSS of TCP SYNs leaving %s to %s, so PMTUD black holes cannot stall TCP", a.oif, a.mss)
}

func (a *mssClamp) Plan(ctx context.Context, env *Env) (Step, error) {
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("MSS clamp (%s) on TCP SYNs out of %s", a.mss, a.oif)}
	if !env.HasNft {
		return a.planIptables(ctx, env, st)
	}
	set := "rt mtu"
	if a.mss != "pmtu" {
		set = a.mss
	}
	c := nftChain{
		name:   "mss_" + chainSafe(a.oif),
		hook:   "type filter hook postrouting priority mangle; policy accept;",
		rules:  []string{fmt.Sprintf("oifname %q tcp flags syn / syn,rst tcp option maxseg size set %s", a.oif, set)},
		marker: "wgperf mss-clamp " + a.oif + " " + a.mss,
	}
	if err := c.plan(ctx, env, &st); err != nil {
		return Step{}, err
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}

func (a *mssClamp) planIptables(ctx context.Context, env *Env, st Step) (Step, error) {
	clamp := "--clamp-mss-to-pmtu"
	if a.mss != "pmtu" {
		clamp = "--set-mss " + a.mss
	}
	rule := fmt.Sprintf("POSTROUTING -o %s -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS %s", a.oif, clamp)
	return iptablesRule(ctx, env, st, "mangle", []string{rule})
}

// iptablesRule adds rules (iptables argument strings without -A) unless present.
func iptablesRule(ctx context.Context, env *Env, st Step, table string, rules []string) (Step, error) {
	for _, r := range rules {
		if _, err := env.sh(ctx, "iptables -t "+table+" -C "+r); err == nil {
			continue
		}
		st.Commands = append(st.Commands, "iptables -t "+table+" -A "+r)
		st.Undo = append([]string{"iptables -t " + table + " -D " + r}, st.Undo...)
	}
	if len(st.Commands) > 0 {
		st.Notes = append(st.Notes, "nft not found, used iptables; save the rules (iptables-save) to keep them after a reboot")
	}
	st.Done = len(st.Commands) == 0
	return st, nil
}

// chainSafe turns an interface name into a chain-name suffix.
func chainSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// noTrack exempts tunnel traffic and the WireGuard UDP port from connection
// tracking when no NAT or stateful rule needs it.
type noTrack struct {
	iface string
	port  string
}

// Notrack exempts iface's traffic and its WireGuard listen port from
// connection tracking; the display uses a table of wgperf's own.
func Notrack(iface string, port int) (Remedy, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("port %d: want 1..65535", port)
	}
	a := &noTrack{iface: iface, port: strconv.Itoa(port)}
	cmds := []string{
		"nft add table inet wgperf_raw",
		target.Quote("nft", "add chain inet wgperf_raw prerouting { type filter hook prerouting priority raw; }"),
		target.Quote("nft", "add chain inet wgperf_raw output { type filter hook output priority raw; }"),
		target.Quote("nft", fmt.Sprintf(`add rule inet wgperf_raw prerouting iifname "%s" notrack`, iface)),
		target.Quote("nft", "add rule inet wgperf_raw prerouting udp dport "+a.port+" notrack"),
		target.Quote("nft", fmt.Sprintf(`add rule inet wgperf_raw output oifname "%s" notrack`, iface)),
		target.Quote("nft", "add rule inet wgperf_raw output udp sport "+a.port+" notrack"),
	}
	cfg := []finding.ConfigSnippet{{Path: "/etc/nftables.conf", Lines: []string{
		"table inet wgperf_raw {",
		"\tchain prerouting {",
		"\t\ttype filter hook prerouting priority raw;",
		fmt.Sprintf("\t\tiifname %q notrack", iface),
		"\t\tudp dport " + a.port + " notrack",
		"\t}",
		"\tchain output {",
		"\t\ttype filter hook output priority raw;",
		fmt.Sprintf("\t\toifname %q notrack", iface),
		"\t\tudp sport " + a.port + " notrack",
		"\t}",
		"}",
	}}}
	return shown{a, cmds, cfg}, nil
}

func parseNotrack(p params) (Remedy, error) {
	iface, err := p.get("interface")
	if err != nil {
		return nil, err
	}
	port, err := p.int("port")
	if err != nil {
		return nil, err
	}
	return Notrack(iface, port)
}

func (a *noTrack) Params() map[string]string {
	return map[string]string{"interface": a.iface, "port": a.port}
}

func (a *noTrack) Kind() string { return "notrack" }

func (a *noTrack) Describe() string {
	return fmt.Sprintf("stop connection tracking for traffic in %s and its UDP port %s", a.iface, a.port)
}

func (a *noTrack) Plan(ctx context.Context, env *Env) (Step, error) {
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("NOTRACK for %s and udp port %s", a.iface, a.port)}
	if !env.HasNft {
		return iptablesRule(ctx, env, st, "raw", []string{
			fmt.Sprintf("PREROUTING -i %s -m comment --comment wgperf -j NOTRACK", a.iface),
			fmt.Sprintf("PREROUTING -p udp --dport %s -m comment --comment wgperf -j NOTRACK", a.port),
			fmt.Sprintf("OUTPUT -o %s -m comment --comment wgperf -j NOTRACK", a.iface),
			fmt.Sprintf("OUTPUT -p udp --sport %s -m comment --comment wgperf -j NOTRACK", a.port),
		})
	}
	marker := "wgperf notrack " + a.iface + " " + a.port
	for _, c := range []nftChain{
		{name: "notrack_" + chainSafe(a.iface) + "_in", hook: "type filter hook prerouting priority raw; policy accept;",
			rules: []string{fmt.Sprintf("iifname %q notrack", a.iface), "udp dport " + a.port + " notrack"}, marker: marker},
		{name: "notrack_" + chainSafe(a.iface) + "_out", hook: "type filter hook output priority raw; policy accept;",
			rules: []string{fmt.Sprintf("oifname %q notrack", a.iface), "udp sport " + a.port + " notrack"}, marker: marker},
	} {
		var sub Step
		if err := c.plan(ctx, env, &sub); err != nil {
			return Step{}, err
		}
		st.merge(sub)
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}
