package remedy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// IptablesRule is one iptables rule as iptables-save prints it.
type IptablesRule struct {
	Family   string // "ip" (iptables) or "ip6" (ip6tables)
	Table    string
	Chain    string
	Position int    // its number in the chain when it was read (1 = first)
	Text     string // "-A CHAIN ...", without the counters
}

// iptLimit raises the rate of an iptables limit or hashlimit match in place
// ("iptables -R"). The rule is found again by its text when planned, so a
// rule inserted above it meanwhile does not make the change hit another.
type iptLimit struct {
	rate                 int
	family, table, chain string
	text                 string   // the rule as iptables-save prints it
	words                []string // text split: "-A", CHAIN, ...
}

// iptLimitOptions take a rate as their value.
var iptLimitOptions = []string{"--limit", "--hashlimit-upto", "--hashlimit-above", "--hashlimit"}

// IptablesLimit raises the limit of iptables rule r to rate packets/second:
// "-m limit --limit N ... -j ACCEPT", a hashlimit's --hashlimit-upto or --hashlimit-above.
func IptablesLimit(r IptablesRule, rate int) (Remedy, error) {
	a, err := newIptLimit(r.Family, r.Table, r.Chain, r.Text, rate)
	if err != nil {
		return nil, err
	}
	if r.Position < 1 {
		return nil, fmt.Errorf("iptables rule position %d: want 1 or more", r.Position)
	}
	raised := a.raised()
	cmd := shell.Join(a.tool(), append([]string{"-t", a.table, "-R", a.chain, strconv.Itoa(r.Position)}, raised[2:]...)...)
	file := "/etc/iptables/rules.v4"
	if a.family == "ip6" {
		file = "/etc/iptables/rules.v6"
	}
	return shown{a, []string{cmd}, []finding.ConfigSnippet{{
		Path:  file + " (*" + a.table + "), or wherever your firewall script adds the rule",
		Lines: []string{shell.Join(raised[0], raised[1:]...)},
	}}}, nil
}

func newIptLimit(family, table, chain, text string, rate int) (*iptLimit, error) {
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	if family != "ip" && family != "ip6" {
		return nil, fmt.Errorf("iptables family %q: want ip or ip6", family)
	}
	for what, v := range map[string]string{"table": table, "chain": chain} {
		if !nftNameRE.MatchString(v) {
			return nil, fmt.Errorf("iptables %s %q is not valid", what, v)
		}
	}
	if err := checkText("rule", text); err != nil {
		return nil, err
	}
	words, err := shell.Split(text, '"')
	if err != nil {
		return nil, fmt.Errorf("rule %q: %v", text, err)
	}
	if len(words) < 3 || words[0] != "-A" || words[1] != chain {
		return nil, fmt.Errorf("rule %q: want \"-A %s ...\"", text, chain)
	}
	a := &iptLimit{rate: rate, family: family, table: table, chain: chain, text: text, words: words}
	if a.limitAt() < 0 {
		return nil, fmt.Errorf("rule %q has no --limit or --hashlimit rate", text)
	}
	return a, nil
}

// limitAt is the index of the rate value in words, -1 when there is none.
func (a *iptLimit) limitAt() int {
	for i := 2; i+1 < len(a.words); i++ {
		if slices.Contains(iptLimitOptions, a.words[i]) {
			return i + 1
		}
	}
	return -1
}

// raised is the rule's words with the rate set to a.rate per second. A limit
// match's burst grows with it to a tenth of a second's worth: its token
// bucket refills once a jiffy, so at the default burst of 5 a monitoring
// agent's six echo requests at once still lose a reply at any rate.
func (a *iptLimit) raised() []string {
	w := slices.Clone(a.words)
	at := a.limitAt()
	w[at] = strconv.Itoa(a.rate) + "/sec"
	if w[at-1] != "--limit" {
		return w
	}
	burst := raisedBurst(a.rate)
	if i := slices.Index(w, "--limit-burst"); i > at && i+1 < len(w) {
		if cur, err := strconv.Atoi(w[i+1]); err == nil && cur < burst {
			w[i+1] = strconv.Itoa(burst)
		}
		return w
	}
	return slices.Insert(w, at+1, "--limit-burst", strconv.Itoa(burst))
}

func (a *iptLimit) tool() string {
	if a.family == "ip6" {
		return "ip6tables"
	}
	return "iptables"
}

func parseIptablesLimit(p params, rate int) (Remedy, error) {
	var family, table, chain, text string
	var err error
	for key, dst := range map[string]*string{"family": &family, "table": &table, "chain": &chain, "rule": &text} {
		if *dst, err = p.get(key); err != nil {
			return nil, err
		}
	}
	a, err := newIptLimit(family, table, chain, text, rate)
	if err != nil {
		return nil, err
	}
	return shown{planner: a}, nil
}

func (a *iptLimit) Kind() string { return KindICMPLimit }

func (a *iptLimit) Params() map[string]string {
	return map[string]string{"rate": strconv.Itoa(a.rate), "backend": "iptables", "family": a.family,
		"table": a.table, "chain": a.chain, "rule": a.text}
}

func (a *iptLimit) Describe() string {
	return fmt.Sprintf("raise the ICMP rate limit of %s rule %q (table %s) to %d/s so health-check replies are not dropped",
		a.tool(), strings.Join(a.words, " "), a.table, a.rate)
}

// Plan finds the rule's position in "iptables-save -t TABLE" and replaces it.
func (a *iptLimit) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, a.tool()+"-save", "-t", a.table)
	if err != nil {
		return Step{}, err
	}
	pos, n := 0, 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "[") { // counters, as "iptables-save -c" prints them
			_, l, _ = strings.Cut(l, "] ")
		}
		if !strings.HasPrefix(l, "-A "+a.chain+" ") {
			continue
		}
		n++
		if w, err := shell.Split(strings.TrimSpace(l), '"'); err == nil && slices.Equal(w, a.words) {
			pos = n
			break
		}
	}
	if pos == 0 {
		return Step{}, fmt.Errorf("%s: no rule %q in %s table %s", env.T, strings.Join(a.words, " "), a.tool(), a.table)
	}
	old := a.words[a.limitAt()]
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("ICMP limit %s -> %d/sec (%s -t %s, rule %d of %s)", old, a.rate, a.tool(), a.table, pos, a.chain),
		Notes: []string{"runtime only: also raise the rate where the rule is defined (iptables-persistent, firewall script), or it returns at the next firewall reload"}}
	if old == strconv.Itoa(a.rate)+"/sec" || old == strconv.Itoa(a.rate)+"/second" || old == strconv.Itoa(a.rate)+"/s" {
		st.Done = true
		return st, nil
	}
	replace := func(words []string) string {
		return shell.Join(a.tool(), append([]string{"-t", a.table, "-R", a.chain, strconv.Itoa(pos)}, words[2:]...)...)
	}
	st.Commands = []string{replace(a.raised())}
	st.Undo = []string{replace(a.words)}
	return st, nil
}

// nftVerdictRE finds verdict keywords; NftCountRule puts "counter" before the last.
var (
	nftVerdictRE = regexp.MustCompile(`(^|\s)(drop|reject|accept|jump|goto)(\s|$)`)
	nftCommentRE = regexp.MustCompile(`\s+comment\s+"[^"]*"$`)
	nftCounterRE = regexp.MustCompile(`(^|\s)counter(\s|$)`)
)

// NftCountRule is the fix that gives nft rule r (a drop without a counter) a
// counter, by handle, so the drops it makes can be measured: "nft replace
// rule ... counter drop". Shown, not applied: it changes no verdict.
func NftCountRule(description string, r NftRule) (finding.Fix, error) {
	if _, err := newNftLimit(r, 1); err != nil {
		return finding.Fix{}, err
	}
	if err := checkRule(r.Text); err != nil {
		return finding.Fix{}, err
	}
	if nftCounterRE.MatchString(r.Text) {
		return finding.Fix{}, fmt.Errorf("rule %q already has a counter", r.Text)
	}
	body := nftCommentRE.ReplaceAllString(r.Text, "")
	m := nftVerdictRE.FindAllStringSubmatchIndex(body, -1)
	if m == nil {
		return finding.Fix{}, fmt.Errorf("rule %q has no verdict", r.Text)
	}
	at := m[len(m)-1][4] // start of the last verdict keyword
	counted := r.Text[:at] + "counter " + r.Text[at:]
	return finding.Fix{Description: description, Commands: []string{
		shell.Join("nft", fmt.Sprintf("replace rule %s %s %s handle %d %s", r.Family, r.Table, r.Chain, r.Handle, counted)),
	}}, nil
}

// NftCountPolicy is the fix that counts what a chain's drop policy drops of
// one protocol (icmp or icmpv6): a counted drop appended to the chain, which
// drops nothing the policy would not. nftables has no policy counter.
func NftCountPolicy(description, family, table, chain, protocol string) (finding.Fix, error) {
	if _, err := newNftLimit(NftRule{Family: family, Table: table, Chain: chain}, 1); err != nil {
		return finding.Fix{}, err
	}
	match := map[string]string{"icmp": "meta l4proto icmp", "icmpv6": "meta l4proto ipv6-icmp"}[protocol]
	if match == "" {
		return finding.Fix{}, fmt.Errorf("protocol %q: want icmp or icmpv6", protocol)
	}
	return finding.Fix{Description: description, Commands: []string{
		shell.Join("nft", fmt.Sprintf("add rule %s %s %s %s counter drop", family, table, chain, match)),
	}}, nil
}
