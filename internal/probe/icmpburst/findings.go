package icmpburst

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Raises are the findings this package builds: the burst's analysis. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.ICMPRatelimitDrops}

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
		ID: catalog.ICMPRatelimitDrops, Severity: finding.Warning, Host: r.Host,
		Title: fmt.Sprintf("One-shot pings fail %d/%d, a persistent ping %d/%d: a rate limiter drops reply bursts",
			one.Failed, one.Sent, per.Failed, per.Sent),
		Detail: "Health checkers (mwan3, keepalived, monitoring) spawn one ping per check; their replies arrive in bursts that an ICMP " +
			"flood rule with a small burst drops, so the checker declares a healthy uplink dead and fails over.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "ping -c 1 (separate processes)", Key: "failed", Value: fmt.Sprintf("%d of %d", one.Failed, one.Sent), Threshold: "0"}.Of(float64(one.Failed), finding.Packets),
			finding.Evidence{Source: "ping -c N -i 0.2 (one process)", Key: "failed", Value: fmt.Sprintf("%d of %d", per.Failed, per.Sent)}.Of(float64(per.Failed), finding.Packets),
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
		f.Evidence = append(f.Evidence, finding.Evidence{Source: source, Key: g.String(), Value: fmt.Sprintf("+%d packets during the test", g.Packets), Threshold: "+0"}.Of(float64(g.Packets), finding.Packets))
		for _, fx := range raiseFix(g) {
			if !slices.ContainsFunc(f.Fixes, func(x finding.Fix) bool { return slices.Equal(x.Commands, fx.Commands) }) {
				f.Fixes = append(f.Fixes, fx)
			}
		}
	}
	for _, u := range r.Uncounted {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "nft -j list ruleset", Key: "ICMP limit whose drops nothing counts",
			Value: firewall.DescribeRule(u.Limit) + ", excess dropped by " + u.dropper()})
		f.Fixes = append(f.Fixes, countFix(u)...)
		f.Fixes = append(f.Fixes, raiseFix(CounterGrowth{Limit: &u.Limit})...)
	}
	if b := r.Background; b != nil && (b.Replies > 0 || len(b.Pingers) > 0) {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "/proc/net/snmp, ss -w -p", Key: fmt.Sprintf("ICMP before the test (%.0f s)", b.Seconds),
			Value: b.Verdict, Threshold: "bursts that fit the limiter"}.Of(float64(b.Burst), finding.Packets))
		if !b.Fits {
			f.Detail += " The health checks are not alone at the limiter: " + b.Verdict + "."
		}
	}
	if r.Interface != "" {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "ping -I", Key: "pinged through", Value: r.Interface})
	}
	if len(r.Grew) == 0 && len(r.Uncounted) == 0 {
		f.Detail += " No firewall counter grew during the test" + noteSuffix(r.Note) + "; look for a limit on the next hop."
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

func (u Uncounted) dropper() string {
	if u.Policy != nil {
		return fmt.Sprintf("the %s policy of %s %s %s", strings.ToUpper(u.Policy.Policy), u.Policy.Family, u.Policy.Table, u.Policy.Name)
	}
	if u.Drop != nil {
		return firewall.DescribeRule(*u.Drop)
	}
	return "an unknown rule"
}

// countFix shows the counter that would prove (or clear) an uncounted limit.
func countFix(u Uncounted) []finding.Fix {
	const desc = "Count what the limit drops, then run the test again"
	var fx finding.Fix
	var err error
	switch {
	case u.Policy != nil:
		proto := "icmp"
		if strings.Contains(u.Limit.Protocol, "icmpv6") || strings.Contains(u.Limit.Protocol, "ipv6-icmp") || u.Limit.Family == "ip6" {
			proto = "icmpv6"
		}
		fx, err = remedy.NftCountPolicy(desc, u.Policy.Family, u.Policy.Table, u.Policy.Name, proto)
	case u.Drop != nil:
		d := *u.Drop
		fx, err = remedy.NftCountRule(desc, remedy.NftRule{Family: d.Family, Table: d.Table, Chain: d.Chain, Handle: d.Handle, Text: d.Text})
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return []finding.Fix{fx}
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}
