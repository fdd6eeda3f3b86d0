package remedy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindMSSClamp = "mss-clamp" // oif (tunnel interface), mss ("pmtu" to clamp to route MTU, or a number)
	KindNoTrack  = "notrack"   // interface, port (WireGuard listen port)
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
	// iptTable and iptRules are the chain as iptables rules (without -A),
	// for firewalld's direct rules.
	iptTable string
	iptRules []string
}

// text renders the chain as an nft -f file; on OpenWrt it says how fw4 loads it.
func (c nftChain) text(p Platform) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by wgperf fix; delete this file and run: nft delete chain inet %s %s\n", NftTable, c.name)
	if p == OpenWrt {
		b.WriteString(fw4IncludeNote)
	}
	fmt.Fprintf(&b, "table inet %s {\n\tchain %s {\n\t\t%s\n", NftTable, c.name, c.hook)
	for _, r := range c.rules {
		fmt.Fprintf(&b, "\t\t%s comment %q\n", r, c.marker)
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

// path is where the chain persists: on OpenWrt, fw4's ruleset-post folder
// (see fw4IncludeNote); on other systems /etc/nftables.conf gets an include
// of our folder.
func (c nftChain) path(p Platform) string {
	if p == OpenWrt {
		return fw4RulesetPost + "/90-wgperf-" + c.name + ".nft"
	}
	return nftDir + "/" + c.name + ".nft"
}

// fw4RulesetPost is the folder whose *.nft files OpenWrt's fw4 includes after
// its own "table inet fw4 { ... }" at every firewall start (the default
// auto_includes). /etc/nftables.d/*.nft would not do: fw4 includes those
// inside its table, where a table of wgperf's own is a syntax error that
// stops the firewall. Unlike /etc/nftables.d, this folder is not kept by
// sysupgrade, so the plan lists each file in /etc/sysupgrade.conf.
const fw4RulesetPost = "/usr/share/nftables.d/ruleset-post"

// sysupgradeConf lists the files an OpenWrt sysupgrade keeps.
const sysupgradeConf = "/etc/sysupgrade.conf"

// keepOnSysupgrade lists path (as on the router) in /etc/sysupgrade.conf,
// one path a line, unless it is there: nil when nothing changes.
func keepOnSysupgrade(ctx context.Context, env *Env, keep string) (*FileChange, error) {
	conf := env.Path(sysupgradeConf)
	fc, err := env.change(ctx, conf, func(old []byte, _ bool) ([]byte, error) {
		for _, l := range strings.Split(string(old), "\n") {
			if strings.TrimSpace(l) == keep {
				return old, nil
			}
		}
		if len(old) > 0 && old[len(old)-1] != '\n' {
			old = append(old, '\n')
		}
		return append(append([]byte{}, old...), keep+"\n"...), nil
	})
	if err != nil || fc == nil {
		return nil, err
	}
	fc.Edit = []string{fmt.Sprintf("echo %s >> %s", shell.Join(keep), shell.Join(conf))}
	return fc, nil
}

// fw4IncludeNote heads a chain file on OpenWrt.
const fw4IncludeNote = "# fw4 includes " + fw4RulesetPost + "/*.nft after its own table at every firewall\n" +
	"# start (auto_includes in /etc/config/firewall); " + sysupgradeConf + " lists this file for sysupgrade.\n"

func (c nftChain) file(env *Env) string { return env.Path(c.path(env.Platform)) }

// nftDir holds the chain files /etc/nftables.conf includes (not on OpenWrt).
const nftDir = "/etc/wgperf/nft"

// includeLines are what the plan appends to /etc/nftables.conf.
func includeLines(dir string) []string {
	return []string{"# wgperf fix: its own table", fmt.Sprintf("include %q", dir+"/*.nft")}
}

// showChains renders chains the way the plan makes them: nft commands for
// the runtime change, the chain files and the nftables.conf include for the
// persistent one (both layouts when the platform is Unknown), and the
// iptables rules the plan falls back to without nft.
func showChains(p Platform, chains []nftChain, iptTable string, iptRules []string) ([]string, []finding.ConfigSnippet) {
	cmds := []string{"nft add table inet " + NftTable}
	var cfg []finding.ConfigSnippet
	for _, c := range chains {
		cmds = append(cmds, shell.Join("nft", fmt.Sprintf("add chain inet %s %s { %s }", NftTable, c.name, c.hook)))
		for _, r := range c.rules {
			cmds = append(cmds, shell.Join("nft", fmt.Sprintf("add rule inet %s %s %s comment %q", NftTable, c.name, r, c.marker)))
		}
		for _, pl := range []Platform{Linux, OpenWrt} {
			if p == pl || p == Unknown {
				cfg = append(cfg, finding.ConfigSnippet{Path: c.path(pl), Lines: splitLines(c.text(pl))})
			}
		}
	}
	if p != OpenWrt {
		cfg = append(cfg, finding.ConfigSnippet{Path: "/etc/nftables.conf", Lines: includeLines(nftDir)})
	}
	if p == OpenWrt || p == Unknown {
		var keep []string
		for _, c := range chains {
			keep = append(keep, c.path(OpenWrt))
		}
		cfg = append(cfg, finding.ConfigSnippet{Path: sysupgradeConf, Lines: keep})
	}
	for _, r := range iptRules {
		cmds = append(cmds, "# or, with iptables: iptables -t "+iptTable+" -A "+r)
	}
	return cmds, cfg
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
	fc, err := env.change(ctx, path, func([]byte, bool) ([]byte, error) { return []byte(c.text(env.Platform)), nil })
	if err != nil {
		return err
	}
	if fc != nil {
		fc.Edit = []string{"mkdir -p " + shell.Join(Dir(path)), Heredoc(path, fc.New)}
		st.Files = append(st.Files, *fc)
	}
	if env.Platform == OpenWrt {
		fc, err := keepOnSysupgrade(ctx, env, c.path(OpenWrt))
		if err != nil {
			return err
		}
		if fc != nil {
			st.Files = append(st.Files, *fc)
		}
	}
	if env.Platform != OpenWrt {
		if err := c.planBoot(ctx, env, path, st); err != nil {
			return err
		}
	}
	if current != "" && countRules(current, c.marker) == len(c.rules) && countRules(current, "comment") == len(c.rules) {
		return nil // runtime already in place
	}
	chain := fmt.Sprintf("inet %s %s", NftTable, c.name)
	if current != "" {
		st.Commands = append(st.Commands, "nft delete chain "+chain)
	}
	st.Commands = append(st.Commands, "nft -f "+shell.Join(path))
	st.Undo = append(st.Undo, "nft delete chain "+chain)
	if current != "" {
		// The listing is the host's text (a rule comment may hold any line): fed, never pasted.
		st.Undo = append(st.Undo, shell.Stdin("nft -f -", strings.TrimRight(current, "\n")+"\n"))
	}
	if !tableExists {
		// Only remove the table when no other chain of ours is left in it.
		st.Undo = append(st.Undo, fmt.Sprintf("nft list table inet %s | grep -q '^[[:space:]]*chain ' || nft delete table inet %s", NftTable, NftTable))
	}
	return nil
}

// planBoot appends the include of wgperf's folder to the file
// nftables.service loads at boot when that service is enabled; otherwise the
// step says "runtime only" and what would keep it.
func (c nftChain) planBoot(ctx context.Context, env *Env, path string, st *Step) error {
	b, err := readNftBoot(ctx, env)
	if err != nil {
		st.Notes = append(st.Notes, fmt.Sprintf("runtime only: the plan could not tell what loads nftables at boot (%v); load %s at boot with nft -f", err, path))
		return nil
	}
	note, include := nftBootNote(b, path, c.iptTable, c.iptRules)
	conf := env.Path(b.Conf)
	if include {
		ok, err := env.exists(ctx, conf)
		if err != nil {
			return err
		}
		if !ok {
			include = false
			note = "runtime only: nftables.service is " + b.Nftables + " but " + b.Conf + " does not exist; load " + path + " at boot with nft -f"
		}
	}
	if !include {
		if !slices.Contains(st.Notes, note) {
			st.Notes = append(st.Notes, note)
		}
		return nil
	}
	inc := includeLines(env.Path(nftDir))
	fc, err := env.change(ctx, conf, func(old []byte, _ bool) ([]byte, error) {
		if strings.Contains(string(old), inc[1]) {
			return old, nil
		}
		return append(append([]byte{}, old...), []byte("\n"+inc[0]+"\n"+inc[1]+"\n")...), nil
	})
	if err != nil {
		return err
	}
	if fc != nil {
		fc.Edit = []string{fmt.Sprintf("printf '\\n# wgperf fix: its own table\\n%%s\\n' %s >> %s", shell.Join(inc[1]), shell.Join(conf))}
		st.Files = append(st.Files, *fc)
	}
	if !slices.Contains(st.Notes, note) {
		st.Notes = append(st.Notes, note)
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
// is 0, else to mss (536..9000), in a chain of wgperf's own table so it never
// edits the user's tables. platform decides where the display persists it.
func MSSClamp(oif string, mss int, platform Platform) (Remedy, error) {
	if err := checkIface("interface", oif); err != nil {
		return nil, err
	}
	a := &mssClamp{oif: oif, mss: "pmtu"}
	if mss != 0 {
		if mss < 536 || mss > 9000 {
			return nil, fmt.Errorf("mss %d: want 536..9000, or 0 for the route MTU", mss)
		}
		a.mss = strconv.Itoa(mss)
	}
	cmds, cfg := showChains(platform, []nftChain{a.chain()}, "mangle", a.iptablesRules())
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
	return MSSClamp(oif, mss, Unknown)
}

func (a *mssClamp) Params() map[string]string { return map[string]string{"oif": a.oif, "mss": a.mss} }

func (a *mssClamp) Kind() string { return KindMSSClamp }

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
	if err := a.chain().plan(ctx, env, &st); err != nil {
		return Step{}, err
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	if !st.Done {
		st.Notes = append(st.Notes, newFlowsOnly)
	}
	return st, nil
}

// newFlowsOnly says what a clamp of SYNs reaches: verify's measurement opens
// new connections, so it sees the change; a transfer already running does not.
const newFlowsOnly = "a clamp rewrites SYNs: connections open now keep their MSS until they reconnect (new ones, the verification's too, get it)"

// chain is the clamp as a chain of wgperf's table.
func (a *mssClamp) chain() nftChain {
	set := "rt mtu"
	if a.mss != "pmtu" {
		set = a.mss
	}
	return nftChain{
		name:     "mss_" + chainSafe(a.oif),
		hook:     "type filter hook postrouting priority mangle; policy accept;",
		rules:    []string{fmt.Sprintf("oifname %q tcp flags syn / syn,rst tcp option maxseg size set %s", a.oif, set)},
		marker:   "wgperf mss-clamp " + a.oif + " " + a.mss,
		iptTable: "mangle", iptRules: a.iptablesRules(),
	}
}

// iptablesRules are the clamp for hosts without nft (mangle table, without -A).
func (a *mssClamp) iptablesRules() []string {
	clamp := "--clamp-mss-to-pmtu"
	if a.mss != "pmtu" {
		clamp = "--set-mss " + a.mss
	}
	return []string{fmt.Sprintf("POSTROUTING -o %s -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS %s", a.oif, clamp)}
}

func (a *mssClamp) planIptables(ctx context.Context, env *Env, st Step) (Step, error) {
	st, err := iptablesRule(ctx, env, st, "mangle", a.iptablesRules())
	if err == nil && !st.Done {
		st.Notes = append(st.Notes, newFlowsOnly)
	}
	return st, err
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
	if err := iptablesBoot(ctx, env, &st, table, rules); err != nil {
		return Step{}, err
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
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
// connection tracking, in chains of wgperf's own table. platform decides
// where the display persists them.
func Notrack(iface string, port int, platform Platform) (Remedy, error) {
	if err := checkIface("interface", iface); err != nil {
		return nil, err
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("port %d: want 1..65535", port)
	}
	a := &noTrack{iface: iface, port: strconv.Itoa(port)}
	cmds, cfg := showChains(platform, a.chains(), "raw", a.iptablesRules())
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
	return Notrack(iface, port, Unknown)
}

// chains are the exemption as two chains of wgperf's table, in and out.
func (a *noTrack) chains() []nftChain {
	marker := "wgperf notrack " + a.iface + " " + a.port
	return []nftChain{
		{name: "notrack_" + chainSafe(a.iface) + "_in", hook: "type filter hook prerouting priority raw; policy accept;",
			rules: []string{fmt.Sprintf("iifname %q notrack", a.iface), "udp dport " + a.port + " notrack"}, marker: marker,
			iptTable: "raw", iptRules: a.iptablesRules()[:2]},
		{name: "notrack_" + chainSafe(a.iface) + "_out", hook: "type filter hook output priority raw; policy accept;",
			rules: []string{fmt.Sprintf("oifname %q notrack", a.iface), "udp sport " + a.port + " notrack"}, marker: marker,
			iptTable: "raw", iptRules: a.iptablesRules()[2:]},
	}
}

// iptablesRules are the exemption for hosts without nft (raw table, without -A).
func (a *noTrack) iptablesRules() []string {
	return []string{
		fmt.Sprintf("PREROUTING -i %s -m comment --comment wgperf -j NOTRACK", a.iface),
		fmt.Sprintf("PREROUTING -p udp --dport %s -m comment --comment wgperf -j NOTRACK", a.port),
		fmt.Sprintf("OUTPUT -o %s -m comment --comment wgperf -j NOTRACK", a.iface),
		fmt.Sprintf("OUTPUT -p udp --sport %s -m comment --comment wgperf -j NOTRACK", a.port),
	}
}

func (a *noTrack) Params() map[string]string {
	return map[string]string{"interface": a.iface, "port": a.port}
}

func (a *noTrack) Kind() string { return KindNoTrack }

func (a *noTrack) Describe() string {
	return fmt.Sprintf("stop connection tracking for traffic in %s and its UDP port %s", a.iface, a.port)
}

func (a *noTrack) Plan(ctx context.Context, env *Env) (Step, error) {
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("NOTRACK for %s and udp port %s", a.iface, a.port)}
	if !env.HasNft {
		return iptablesRule(ctx, env, st, "raw", a.iptablesRules())
	}
	for _, c := range a.chains() {
		var sub Step
		if err := c.plan(ctx, env, &sub); err != nil {
			return Step{}, err
		}
		st.merge(sub)
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}
