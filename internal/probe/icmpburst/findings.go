package icmpburst

import (
	"fmt"
	"slices"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// RaisedLimit is the rate the multi-WAN stale endpoint route case raised banIP's ICMP limit to.
const RaisedLimit = 250

// Findings reports icmp.ratelimit-drops when one-shot pings fail clearly more
// often than a persistent ping to the same targets. It is pure.
func Findings(r *Result) []finding.Finding {
	one, per := r.OneShot, r.Persistent
	if one.Failed == 0 || one.Rate() < 2*per.Rate()+0.05 {
		return nil
	}
	f := finding.Finding{
		ID: finding.ICMPRatelimitDrops, Severity: finding.Warning, Host: r.Host,
		Title: fmt.Sprintf("One-shot pings fail %d/%d, a persistent ping %d/%d: a rate limiter drops reply bursts",
			one.Failed, one.Sent, per.Failed, per.Sent),
		Detail: "Health checkers (mwan3, keepalived, monitoring) spawn one ping per check; their replies arrive in bursts that an ICMP " +
			"flood rule with a small burst drops, so the checker declares a healthy uplink dead and fails over.",
		Evidence: []finding.Evidence{
			{Source: "ping -c 1 (separate processes)", Key: "failed", Value: fmt.Sprintf("%d of %d", one.Failed, one.Sent), Threshold: "0"},
			{Source: "ping -c N -i 0.2 (one process)", Key: "failed", Value: fmt.Sprintf("%d of %d", per.Failed, per.Sent)},
		},
	}
	for _, g := range r.Grew {
		if g.Rule != nil && g.Rule.Verdict == "accept" {
			continue // what a limit let through: not a drop
		}
		source := "nft -j list ruleset"
		if (g.Rule != nil && g.Rule.Backend == "iptables") || (g.Policy != nil && g.Policy.Backend == "iptables") {
			source = "iptables-save -c"
		}
		f.Evidence = append(f.Evidence, finding.Evidence{Source: source, Key: g.String(), Value: fmt.Sprintf("+%d packets during the test", g.Packets), Threshold: "+0"})
		for _, fx := range raiseFix(g) {
			if !slices.ContainsFunc(f.Fixes, func(x finding.Fix) bool { return slices.Equal(x.Commands, fx.Commands) }) {
				f.Fixes = append(f.Fixes, fx)
			}
		}
	}
	if len(r.Grew) == 0 {
		f.Detail += " No firewall counter grew during the test" + noteSuffix(r.Note) + "; look for a limit without a counter, or on the next hop."
	}
	f.Fixes = append(f.Fixes, finding.Fix{
		Description: "Find ICMP rate limits and their drop counters (banIP on OpenWrt: uci set banip.global.ban_icmplimit=250)",
		Commands:    []string{"nft list ruleset | grep -n -B2 -A2 'limit rate'", "iptables-save | grep -n -- '--limit'"},
	})
	return []finding.Finding{f}
}

// raiseFix raises the limit whose excess a grown counter counts: the limit
// rule itself ("limit rate over ... drop"), or the accept rule before the
// drop rule or drop policy that grew.
func raiseFix(g CounterGrowth) []finding.Fix {
	lim := g.Limit
	if lim == nil && g.Rule != nil && g.Rule.Limit != nil && g.Rule.Limit.Over {
		lim = g.Rule // a limit that drops and counts (a result recorded without Limit)
	}
	if lim == nil {
		return nil
	}
	if lim.Backend == "iptables" {
		rule := remedy.IptablesRule{Family: lim.Family, Table: lim.Table, Chain: lim.Chain, Position: lim.Position, Text: lim.Text}
		raise, err := remedy.IptablesLimit(rule, RaisedLimit)
		return remedy.Fixes(fmt.Sprintf("Raise the limit of rule %d of %s (%s table %s) to %d/second",
			lim.Position, lim.Chain, lim.Family, lim.Table, RaisedLimit), raise, err)
	}
	rule := remedy.NftRule{Family: lim.Family, Table: lim.Table, Chain: lim.Chain, Handle: lim.Handle, Text: lim.Text}
	raise, err := remedy.NftReplaceRule(rule, RaisedLimit)
	return remedy.Fixes(fmt.Sprintf("Raise the limit of rule %d in %s %s %s to %d/second",
		lim.Handle, lim.Family, lim.Table, lim.Chain, RaisedLimit), raise, err)
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}
