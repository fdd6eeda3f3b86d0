package fix

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// icmpLimit raises a firewall ICMP rate limit that drops health-check replies
// (seed 000): banIP's ban_icmplimit through uci, or one nftables rule by handle.
type icmpLimit struct {
	rate                         int
	banip                        bool
	family, table, chain, handle string
}

func newICMPLimit(p params) (Action, error) {
	r, err := p.get("rate", numberRE)
	if err != nil {
		return nil, err
	}
	rate, _ := strconv.Atoi(r)
	a := &icmpLimit{rate: rate, banip: p["banip"] == "1"}
	if a.banip {
		return a, nil
	}
	for key, dst := range map[string]*string{"family": &a.family, "table": &a.table, "chain": &a.chain} {
		if *dst, err = p.get(key, nftNameRE); err != nil {
			return nil, fmt.Errorf("%w (or banip=1)", err)
		}
	}
	if a.handle, err = p.get("handle", numberRE); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *icmpLimit) Kind() string { return "icmp-limit" }

func (a *icmpLimit) Describe() string {
	if a.banip {
		return fmt.Sprintf("raise banIP's ICMP limit to %d/s so uplink health-check replies are not dropped", a.rate)
	}
	return fmt.Sprintf("raise the ICMP rate limit of nft rule %s %s %s handle %s to %d/s so health-check replies are not dropped",
		a.family, a.table, a.chain, a.handle, a.rate)
}

var limitRE = regexp.MustCompile(`limit rate (over )?([0-9]+)/second`)

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
	old := ""
	for _, l := range strings.Split(string(out), "\n") {
		if rule, ok := strings.CutSuffix(strings.TrimSpace(l), " # handle "+a.handle); ok {
			old = rule
		}
	}
	if old == "" {
		return Step{}, fmt.Errorf("%s: no rule with handle %s in chain %s %s %s", env.T, a.handle, a.family, a.table, a.chain)
	}
	m := limitRE.FindStringSubmatch(old)
	if m == nil {
		return Step{}, fmt.Errorf("%s: rule handle %s has no per-second limit: %s", env.T, a.handle, old)
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("ICMP limit %s/s -> %d/s (%s %s %s handle %s)", m[2], a.rate, a.family, a.table, a.chain, a.handle),
		Notes: []string{"runtime only: also raise the rate where the rule is defined, or it returns at the next firewall reload"}}
	if m[2] == strconv.Itoa(a.rate) {
		st.Done = true
		return st, nil
	}
	newRule := strings.Replace(old, m[0], fmt.Sprintf("limit rate %s%d/second", m[1], a.rate), 1)
	replace := func(rule string) string {
		return target.Quote("nft", "replace", "rule", a.family, a.table, a.chain, "handle", a.handle, rule)
	}
	st.Commands = []string{replace(newRule)}
	st.Undo = []string{replace(old)}
	return st, nil
}
