package remedy

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindICMPLimit = "icmp-limit" // rate (packets/second); family, table, chain, handle of the nft rule (and meter, the one it declares), or banip=1, or backend=iptables with family, table, chain and rule
)

// icmpLimit raises a firewall ICMP rate limit that drops health-check replies
// (multi-WAN failover on dropped pings): banIP's ban_icmplimit through uci,
// or one nftables rule by handle.
type icmpLimit struct {
	rate                         int
	banip                        bool
	family, table, chain, handle string
	// meter is the meter the rule declares, if any: raising such a rule
	// gives it a new handle, and a second plan finds it by its meter.
	meter string
}

// NftRule is one firewall rule as nft -a lists it.
type NftRule struct {
	Family, Table, Chain string
	Handle               int
	Text                 string // the rule without its handle
}

// BanIPLimit raises banIP's ICMP limit (OpenWrt) to rate packets/second.
func BanIPLimit(rate int) (Remedy, error) {
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	r := strconv.Itoa(rate)
	return shown{&icmpLimit{rate: rate, banip: true},
		[]string{"uci set banip.global.ban_icmplimit=" + r, "uci commit banip", "/etc/init.d/banip restart"},
		[]finding.ConfigSnippet{{Path: "/etc/config/banip (config banip 'global')", Lines: []string{"option ban_icmplimit '" + r + "'"}}}}, nil
}

// NftReplaceRule raises the per-second limit of nft rule r to rate, by handle.
// Without the rule's text (a probe that saw only its counter) the display
// lists the chain, where the rule and its handle are.
func NftReplaceRule(r NftRule, rate int) (Remedy, error) {
	a, err := newNftLimit(r, rate)
	if err != nil {
		return nil, err
	}
	if r.Text == "" {
		return shown{a, []string{shell.Join("nft", "-a", "list", "chain", a.family, a.table, a.chain)}, nil}, nil
	}
	raised, err := checkedRaise(r.Text, rate)
	if err != nil {
		return nil, err
	}
	return shown{a, []string{a.put(a.handle, raised)},
		[]finding.ConfigSnippet{{Path: "/etc/nftables.conf (table " + a.family + " " + a.table + ", chain " + a.chain + ")", Lines: []string{raised}}}}, nil
}

// checkedRaise is the rule text with its per-second limit raised to rate.
func checkedRaise(text string, rate int) (string, error) {
	if err := checkRule(text); err != nil {
		return "", err
	}
	return RaiseLimit(text, rate), nil
}

// checkRule refuses rule text that would be more than one rule: nft runs
// every ";"-separated command of its argument.
func checkRule(text string) error {
	if err := checkText("rule", text); err != nil {
		return err
	}
	if strings.Contains(text, ";") {
		return fmt.Errorf("rule %q: one rule without \";\" wanted", text)
	}
	return nil
}

// limitRE is an nft packet limit in any unit, with its burst when the rule
// sets one (nft lists the default, 5 packets, as nothing).
var limitRE = regexp.MustCompile(`limit rate (over )?([0-9]+)/(second|minute|hour|day)( burst ([0-9]+) packets)?`)

// RaiseLimit rewrites every "limit rate [over] N/unit [burst B packets]" in
// an nft rule to rate/second, its burst to at least raisedBurst(rate).
func RaiseLimit(text string, rate int) string {
	return limitRE.ReplaceAllStringFunc(text, func(m string) string {
		raised, _ := raisedLimit(limitRE.FindStringSubmatch(m), rate)
		return raised
	})
}

// raisedLimit is the limit m (limitRE's submatches) at rate per second, with
// its burst grown to a tenth of a second's worth. nft's token bucket holds
// burst packets whatever the rate: at the default 5, a monitoring agent's six
// echo requests at once lose a reply at 250/s as at 25/s (measured in the
// lab on kernel 6.1: one drop a second at 250/s, none with burst 20).
func raisedLimit(m []string, rate int) (text string, burst int) {
	burst = raisedBurst(rate)
	if b, err := strconv.Atoi(m[5]); err == nil && b > burst {
		burst = b
	}
	return fmt.Sprintf("limit rate %s%d/second burst %d packets", m[1], rate, burst), burst
}

// raisedBurst is the burst a raised limit gets: a tenth of a second's worth,
// at least nft's and iptables' default of 5.
func raisedBurst(rate int) int { return max(rate/10, 5) }

func newNftLimit(r NftRule, rate int) (*icmpLimit, error) {
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	for what, v := range map[string]string{"family": r.Family, "table": r.Table, "chain": r.Chain} {
		if !nftNameRE.MatchString(v) {
			return nil, fmt.Errorf("nft %s %q is not valid", what, v)
		}
	}
	if r.Handle < 0 {
		return nil, fmt.Errorf("nft handle %d is not valid", r.Handle)
	}
	return &icmpLimit{rate: rate, family: r.Family, table: r.Table, chain: r.Chain, handle: strconv.Itoa(r.Handle), meter: meterOf(r.Text)}, nil
}

func checkRate(rate int) error {
	if rate < 1 || rate > 1000000 {
		return fmt.Errorf("ICMP rate %d/s: want 1..1000000", rate)
	}
	return nil
}

func parseICMPLimit(p params) (Remedy, error) {
	rate, err := p.int("rate")
	if err != nil {
		return nil, err
	}
	if p["banip"] == "1" {
		return BanIPLimit(rate)
	}
	if p["backend"] == "iptables" {
		return parseIptablesLimit(p, rate)
	}
	var r NftRule
	for key, dst := range map[string]*string{"family": &r.Family, "table": &r.Table, "chain": &r.Chain} {
		if *dst, err = p.get(key); err != nil {
			return nil, fmt.Errorf("%w (or banip=1)", err)
		}
	}
	if r.Handle, err = p.int("handle"); err != nil {
		return nil, err
	}
	a, err := newNftLimit(r, rate)
	if err != nil {
		return nil, err
	}
	if m := p["meter"]; m != "" {
		if !nftNameRE.MatchString(m) {
			return nil, fmt.Errorf("nft meter %q is not valid", m)
		}
		a.meter = m
	}
	return shown{planner: a}, nil
}

func (a *icmpLimit) Params() map[string]string {
	if a.banip {
		return map[string]string{"rate": strconv.Itoa(a.rate), "banip": "1"}
	}
	p := map[string]string{"rate": strconv.Itoa(a.rate), "family": a.family, "table": a.table, "chain": a.chain, "handle": a.handle}
	if a.meter != "" {
		p["meter"] = a.meter
	}
	return p
}

func (a *icmpLimit) Kind() string { return KindICMPLimit }

func (a *icmpLimit) Describe() string {
	if a.banip {
		return fmt.Sprintf("raise banIP's ICMP limit to %d/s so uplink health-check replies are not dropped", a.rate)
	}
	return fmt.Sprintf("raise the ICMP rate limit of nft rule %s %s %s handle %s to %d/s so health-check replies are not dropped",
		a.family, a.table, a.chain, a.handle, a.rate)
}

func (a *icmpLimit) Plan(ctx context.Context, env *Env) (Step, error) {
	if a.banip {
		st, err := (&uciSet{key: "banip.global.ban_icmplimit", value: strconv.Itoa(a.rate), restart: "/etc/init.d/banip"}).Plan(ctx, env)
		st.Kind = a.Kind()
		return st, err
	}
	out, err := env.T.Run(ctx, "nft", "-a", "list", "chain", a.family, a.table, a.chain)
	if err != nil {
		return Step{}, err
	}
	old, handle := a.ruleIn(string(out))
	if old == "" {
		return Step{}, fmt.Errorf("%s: no rule with handle %s in chain %s %s %s", env.T, a.handle, a.family, a.table, a.chain)
	}
	// The host's rule goes back into nft as one command: one rule only.
	newRule, err := checkedRaise(old, a.rate)
	if err != nil {
		return Step{}, err
	}
	// The rule at that handle now may not be the one the finding named (a
	// firewall reload renumbers rules): it must still limit ICMP.
	m := limitRE.FindStringSubmatch(old)
	if m == nil || !icmpMatchRE.MatchString(quotedRE.ReplaceAllString(old, `""`)) {
		return Step{}, fmt.Errorf("%s: rule handle %s in chain %s %s %s is not an ICMP rate limit (was the firewall reloaded? diagnose again): %s",
			env.T, handle, a.family, a.table, a.chain, shell.Comment(old))
	}
	was := m[2] + "/s"
	if m[3] != "second" {
		was = m[2] + "/" + m[3]
	}
	_, burst := raisedLimit(m, a.rate)
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("ICMP limit %s -> %d/s, burst %d (%s %s %s handle %s)", was, a.rate, burst, a.family, a.table, a.chain, handle),
		Notes: []string{"runtime only: also raise the rate where the rule is defined, or it returns at the next firewall reload"}}
	if newRule == old {
		st.Done = true
		return st, nil
	}
	undo := a.put(handle, old)
	if meter := meterOf(old); meter != "" {
		undo = a.restoreMeterRule(meter, old) // the raised rule has a new handle
	}
	st.Commands, st.Undo = []string{a.put(handle, newRule)}, []string{undo}
	return st, nil
}

// icmpMatchRE is an nft match on ICMP or ICMPv6: a protocol match that names
// one ("ip protocol icmp", "meta l4proto { icmp, ipv6-icmp }", banIP's
// "meta nfproto . meta l4proto { ipv4 . icmp }", "ip6 nexthdr icmpv6"), never
// a negated one ("!= icmp"), or an ICMP header match ("icmp type ...").
var icmpMatchRE = regexp.MustCompile(`(?:^|\s)(?:(?:ip protocol|meta l4proto|ip6 nexthdr)\s+(?:\{[^}]*[\s{,.](?:icmp|icmpv6|ipv6-icmp)[\s},][^}]*\}|\{[^}]*[\s{,.](?:icmp|icmpv6|ipv6-icmp)\s*\}|(?:icmp|icmpv6|ipv6-icmp)(?:\s|$))|icmp(?:v6)? (?:type|code) )`)

// quotedRE is a quoted string in a rule (an interface name, a comment):
// never read as a match.
var quotedRE = regexp.MustCompile(`"[^"]*"`)

// meterRE finds the meter a rule declares ("meter NAME [size N] { key limit
// ... }"). The kernel refuses to replace such a rule in place ("Operation not
// supported" on 6.1 and 6.18); a named set's "update @set { ... }" replaces.
var meterRE = regexp.MustCompile(`(?:^|\s)meter ([A-Za-z0-9_][A-Za-z0-9_.-]*) `)

// meterOf is the name of the meter rule declares, or "".
func meterOf(rule string) string {
	if m := meterRE.FindStringSubmatch(rule); m != nil {
		return m[1]
	}
	return ""
}

// ruleIn finds a's rule in a chain as nft -a lists it: by its handle, or,
// once a raise gave it a new handle, by the meter it declares. It returns
// the rule without its handle, and the handle.
func (a *icmpLimit) ruleIn(listing string) (rule, handle string) {
	for _, l := range strings.Split(listing, "\n") {
		l = strings.TrimSpace(l)
		i := strings.LastIndex(l, " # handle ")
		if i < 0 {
			continue
		}
		text, h := l[:i], l[i+len(" # handle "):]
		if h == a.handle {
			return text, h
		}
		if a.meter != "" && meterOf(text) == a.meter {
			rule, handle = text, h
		}
	}
	return rule, handle
}

// put is the nft command that puts rule in place of the rule with handle:
// "replace rule", or for a rule that declares a meter, "delete rule" then
// "insert rule" before its own position in one transaction (the rule keeps
// its place in the chain and gets a new handle).
func (a *icmpLimit) put(handle, rule string) string {
	if meterOf(rule) != "" {
		return shell.Join("nft", fmt.Sprintf("delete rule %[1]s %[2]s %[3]s handle %[4]s; insert rule %[1]s %[2]s %[3]s position %[4]s %[5]s",
			a.family, a.table, a.chain, handle, rule))
	}
	return shell.Join("nft", fmt.Sprintf("replace rule %s %s %s handle %s %s", a.family, a.table, a.chain, handle, rule))
}

// restoreMeterRule undoes put on a meter's rule: the raised rule's new
// handle is found by its meter (a meter's name is unique in its table), and
// old goes back in its place the same way.
func (a *icmpLimit) restoreMeterRule(meter, old string) string {
	find := shell.Join("nft", "-a", "list", "chain", a.family, a.table, a.chain) + " | " +
		shell.Join("sed", "-n", `s/.* meter `+meter+` .*# handle \([0-9][0-9]*\)$/\1/p`)
	return fmt.Sprintf(`h=$(%s) && [ -n "$h" ] && nft "delete rule %[2]s %[3]s %[4]s handle $h; insert rule %[2]s %[3]s %[4]s position $h "%[5]s`,
		find, a.family, a.table, a.chain, shell.Join(old))
}
