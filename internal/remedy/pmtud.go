package remedy

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	// KindPMTUDAllow lets the ICMP errors path MTU discovery needs through,
	// right before a rule that drops them: icmp (FragNeeded, PacketTooBig, or
	// both joined by ","), then family, table, chain and handle of the nft
	// rule, or backend=iptables with family (ip, ip6), table, chain and rule
	// (its text as iptables-save prints it).
	KindPMTUDAllow = "pmtud-allow"
)

// The ICMP errors of path MTU discovery, by the names KindPMTUDAllow's icmp param uses.
const (
	FragNeeded   = "frag-needed"    // ICMP type 3 code 4, "fragmentation needed and DF set"
	PacketTooBig = "packet-too-big" // ICMPv6 type 2
)

// pmtudMarker is the comment on every rule the fix adds: its presence means
// "already in place", and the undo deletes by it.
const pmtudMarker = "wgperf pmtud"

// pmtudAllow inserts accept rules for frag-needed / packet-too-big before the
// rule that drops them, in that rule's own chain: an accept in another chain
// (wgperf's own table) would not stop the drop, since every base chain on a
// hook sees the packet and a drop anywhere is final.
type pmtudAllow struct {
	icmp                 []string // FragNeeded and/or PacketTooBig, in that order
	family, table, chain string
	handle               int      // nft: the dropping rule's handle
	iptables             bool     // the rule is iptables' (family ip or ip6)
	text                 string   // iptables: the dropping rule as iptables-save prints it
	words                []string // text split
}

// NftAllowPMTUD lets the given ICMP errors (FragNeeded, PacketTooBig) through
// before nft rule r, which drops them. Family ip takes only FragNeeded, ip6
// only PacketTooBig, inet both.
func NftAllowPMTUD(r NftRule, icmp []string) (Remedy, error) {
	a, err := newPMTUDAllow(r.Family, r.Table, r.Chain, icmp)
	if err != nil {
		return nil, err
	}
	if r.Handle < 1 {
		return nil, fmt.Errorf("nft handle %d is not valid", r.Handle)
	}
	a.handle = r.Handle
	var cmds, lines []string
	for _, t := range a.icmp {
		cmds = append(cmds, shell.Join("nft", fmt.Sprintf("insert rule %s %s %s position %d %s", a.family, a.table, a.chain, a.handle, nftAccept(t))))
		lines = append(lines, nftAccept(t))
	}
	return shown{a, cmds, []finding.ConfigSnippet{{
		Path:  fmt.Sprintf("/etc/nftables.conf (table %s %s, chain %s: before the rule that drops them)", a.family, a.table, a.chain),
		Lines: lines,
	}}}, nil
}

// IptablesAllowPMTUD lets frag-needed (iptables) or packet-too-big
// (ip6tables) through before iptables rule r, which drops it.
func IptablesAllowPMTUD(r IptablesRule) (Remedy, error) {
	icmp := []string{FragNeeded}
	if r.Family == "ip6" {
		icmp = []string{PacketTooBig}
	}
	a, err := newPMTUDAllow(r.Family, r.Table, r.Chain, icmp)
	if err != nil {
		return nil, err
	}
	if err := a.setRule(r.Text); err != nil {
		return nil, err
	}
	if r.Position < 1 {
		return nil, fmt.Errorf("iptables rule position %d: want 1 or more", r.Position)
	}
	file := "/etc/iptables/rules.v4"
	if a.family == "ip6" {
		file = "/etc/iptables/rules.v6"
	}
	rule := a.iptAccept()
	return shown{a,
		[]string{shell.Join(a.tool(), append([]string{"-t", a.table, "-I", a.chain, strconv.Itoa(r.Position)}, rule...)...)},
		[]finding.ConfigSnippet{{
			Path:  file + " (*" + a.table + ", before the rule that drops it), or wherever your firewall script adds the rule",
			Lines: []string{shell.Join("-A", append([]string{a.chain}, rule...)...)},
		}}}, nil
}

func newPMTUDAllow(family, table, chain string, icmp []string) (*pmtudAllow, error) {
	for what, v := range map[string]string{"family": family, "table": table, "chain": chain} {
		if !nftNameRE.MatchString(v) {
			return nil, fmt.Errorf("firewall %s %q is not valid", what, v)
		}
	}
	a := &pmtudAllow{family: family, table: table, chain: chain}
	for _, t := range []string{FragNeeded, PacketTooBig} {
		if slices.Contains(icmp, t) {
			a.icmp = append(a.icmp, t)
		}
	}
	if len(a.icmp) == 0 || len(a.icmp) != len(icmp) {
		return nil, fmt.Errorf("icmp %q: want %s and/or %s", strings.Join(icmp, ","), FragNeeded, PacketTooBig)
	}
	for _, t := range a.icmp {
		if (t == FragNeeded && family == "ip6") || (t == PacketTooBig && family == "ip") {
			return nil, fmt.Errorf("%s cannot be matched in family %s", t, family)
		}
	}
	if family != "ip" && family != "ip6" && family != "inet" {
		return nil, fmt.Errorf("family %q: want ip, ip6 or inet", family)
	}
	return a, nil
}

// setRule makes the fix iptables': the dropping rule's text, which Plan
// finds again (its position may have changed since it was read).
func (a *pmtudAllow) setRule(text string) error {
	if a.family == "inet" {
		return fmt.Errorf("iptables family %q: want ip or ip6", a.family)
	}
	if err := checkText("rule", text); err != nil {
		return err
	}
	words, err := shell.Split(text, '"')
	if err != nil {
		return fmt.Errorf("rule %q: %v", text, err)
	}
	if len(words) < 3 || words[0] != "-A" || words[1] != a.chain {
		return fmt.Errorf("rule %q: want \"-A %s ...\"", text, a.chain)
	}
	a.iptables, a.text, a.words = true, text, words
	return nil
}

func parsePMTUDAllow(p params) (Remedy, error) {
	icmpParam, err := p.get("icmp")
	if err != nil {
		return nil, err
	}
	icmp := strings.Split(icmpParam, ",")
	var r NftRule
	for key, dst := range map[string]*string{"family": &r.Family, "table": &r.Table, "chain": &r.Chain} {
		if *dst, err = p.get(key); err != nil {
			return nil, err
		}
	}
	if p["backend"] == "iptables" {
		text, err := p.get("rule")
		if err != nil {
			return nil, err
		}
		a, err := newPMTUDAllow(r.Family, r.Table, r.Chain, icmp)
		if err != nil {
			return nil, err
		}
		if err := a.setRule(text); err != nil {
			return nil, err
		}
		return shown{planner: a}, nil
	}
	if r.Handle, err = p.int("handle"); err != nil {
		return nil, err
	}
	return NftAllowPMTUD(r, icmp)
}

func (a *pmtudAllow) Kind() string { return KindPMTUDAllow }

func (a *pmtudAllow) Params() map[string]string {
	p := map[string]string{"icmp": strings.Join(a.icmp, ","), "family": a.family, "table": a.table, "chain": a.chain}
	if a.iptables {
		p["backend"], p["rule"] = "iptables", a.text
	} else {
		p["handle"] = strconv.Itoa(a.handle)
	}
	return p
}

func (a *pmtudAllow) Describe() string {
	where := fmt.Sprintf("nft rule %s %s %s handle %d", a.family, a.table, a.chain, a.handle)
	if a.iptables {
		where = fmt.Sprintf("%s rule %q (table %s)", a.tool(), a.text, a.table)
	}
	return fmt.Sprintf("let ICMP %s through before %s, so path MTU discovery works again", strings.Join(a.icmp, " and "), where)
}

// nftAccept is the accept rule for one ICMP error, with the marker.
func nftAccept(icmp string) string {
	match := "icmp type destination-unreachable icmp code frag-needed"
	if icmp == PacketTooBig {
		match = "icmpv6 type packet-too-big"
	}
	return fmt.Sprintf("%s accept comment %q", match, pmtudMarker)
}

// iptAccept is the accept rule's words after "-I CHAIN POS".
func (a *pmtudAllow) iptAccept() []string {
	if a.family == "ip6" {
		return []string{"-p", "ipv6-icmp", "-m", "icmp6", "--icmpv6-type", "packet-too-big", "-m", "comment", "--comment", pmtudMarker, "-j", "ACCEPT"}
	}
	return []string{"-p", "icmp", "-m", "icmp", "--icmp-type", "fragmentation-needed", "-m", "comment", "--comment", pmtudMarker, "-j", "ACCEPT"}
}

func (a *pmtudAllow) tool() string {
	if a.family == "ip6" {
		return "ip6tables"
	}
	return "iptables"
}

func (a *pmtudAllow) Plan(ctx context.Context, env *Env) (Step, error) {
	if a.iptables {
		return a.planIptables(ctx, env)
	}
	out, err := env.T.Run(ctx, "nft", "-a", "list", "chain", a.family, a.table, a.chain)
	if err != nil {
		return Step{}, err
	}
	// The accepts already in place before the dropping rule, by ICMP error.
	have := map[string]bool{}
	found := false
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, " # handle "+strconv.Itoa(a.handle)) {
			found = true
			break
		}
		if strings.Contains(l, fmt.Sprintf("comment %q", pmtudMarker)) {
			for _, t := range a.icmp {
				if strings.HasPrefix(l, strings.TrimSuffix(nftAccept(t), fmt.Sprintf(" accept comment %q", pmtudMarker))) {
					have[t] = true
				}
			}
		}
	}
	if !found {
		return Step{}, fmt.Errorf("%s: no rule with handle %d in chain %s %s %s", env.T, a.handle, a.family, a.table, a.chain)
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("accept ICMP %s before %s %s %s handle %d", strings.Join(a.icmp, ", "), a.family, a.table, a.chain, a.handle),
		Notes: []string{"runtime only: add the accept before the drop where your firewall configuration defines it, or it is gone at the next firewall reload"}}
	for _, t := range a.icmp {
		if have[t] {
			continue
		}
		st.Commands = append(st.Commands, shell.Join("nft", fmt.Sprintf("insert rule %s %s %s position %d %s", a.family, a.table, a.chain, a.handle, nftAccept(t))))
	}
	if len(st.Commands) == 0 {
		st.Done = true
		return st, nil
	}
	// Delete the rules with our marker in that chain, by the handles nft lists them with.
	st.Undo = []string{fmt.Sprintf("for h in $(nft -a list chain %s %s %s | sed -n 's/.*comment \"%s\" # handle \\([0-9][0-9]*\\)$/\\1/p'); do nft delete rule %s %s %s handle \"$h\"; done",
		a.family, a.table, a.chain, pmtudMarker, a.family, a.table, a.chain)}
	return st, nil
}

// planIptables finds the dropping rule's position in "iptables-save -t TABLE"
// and inserts the accept right before it.
func (a *pmtudAllow) planIptables(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, a.tool()+"-save", "-t", a.table)
	if err != nil {
		return Step{}, err
	}
	pos, n, have := 0, 0, false
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "[") { // counters, as "iptables-save -c" prints them
			_, l, _ = strings.Cut(l, "] ")
		}
		if !strings.HasPrefix(l, "-A "+a.chain+" ") {
			continue
		}
		n++
		w, err := shell.Split(strings.TrimSpace(l), '"')
		if err != nil {
			continue
		}
		if slices.Equal(w, a.words) {
			pos = n
			break
		}
		if slices.Contains(w, pmtudMarker) && slices.Contains(w, "ACCEPT") {
			have = true
		}
	}
	if pos == 0 {
		return Step{}, fmt.Errorf("%s: no rule %q in %s table %s", env.T, strings.Join(a.words, " "), a.tool(), a.table)
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("accept ICMP %s before rule %d of %s (%s -t %s)", a.icmp[0], pos, a.chain, a.tool(), a.table),
		Notes: []string{"runtime only: add the accept before the drop where the rule is defined (iptables-persistent, firewall script), or it is gone at the next firewall reload"}}
	if have {
		st.Done = true
		return st, nil
	}
	rule := a.iptAccept()
	st.Commands = []string{shell.Join(a.tool(), append([]string{"-t", a.table, "-I", a.chain, strconv.Itoa(pos)}, rule...)...)}
	st.Undo = []string{shell.Join(a.tool(), append([]string{"-t", a.table, "-D", a.chain}, rule...)...)}
	return st, nil
}
