package icmpburst

import (
	"fmt"

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
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "nft -j list ruleset", Key: g.String(), Value: fmt.Sprintf("+%d packets during the test", g.Packets), Threshold: "+0"})
		if g.Rule != nil && g.Rule.Limit != nil && g.Rule.Backend != "iptables" {
			rule := remedy.NftRule{Family: g.Rule.Family, Table: g.Rule.Table, Chain: g.Rule.Chain, Handle: g.Rule.Handle, Text: g.Rule.Text}
			raise, err := remedy.NftReplaceRule(rule, RaisedLimit)
			f.Fixes = append(f.Fixes, remedy.Fixes(fmt.Sprintf("Raise the limit of rule %d in %s %s %s to %d/second",
				g.Rule.Handle, g.Rule.Family, g.Rule.Table, g.Rule.Chain, RaisedLimit), raise, err)...)
		}
	}
	if len(r.Grew) == 0 {
		f.Detail += " No nftables counter grew during the test" + noteSuffix(r.Note) + "; look for a limit in iptables or on the next hop."
	}
	f.Fixes = append(f.Fixes, finding.Fix{
		Description: "Find ICMP rate limits and their drop counters (banIP on OpenWrt: uci set banip.global.ban_icmplimit=250)",
		Commands:    []string{"nft list ruleset | grep -n -B2 -A2 'limit rate'", "iptables-save | grep -n -- '--limit'"},
	})
	return []finding.Finding{f}
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}
