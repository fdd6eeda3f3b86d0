package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/icmplimit"
	"github.com/wgperf/wgperf/internal/remedy"
)

// icmpLimitRaised is the rate the multi-WAN case raised banIP's ICMP limit to: far above
// any health-check burst, still a flood guard.
const icmpLimitRaised = 250

var icmpRateLimitDrops = Check{
	Doc: `Looks for rate limits on ICMP (or ICMPv6) in every form firewalls write
them, on an uplink (no input interface match, or one that covers the device of a
default or endpoint route), and for the counter of what drops their excess:
- "limit rate over N/second ... drop" (nft, banIP; per source in a meter or a
  dynamic set), iptables "-m hashlimit --hashlimit-above N -j DROP": the rule
  drops and counts by itself (its own counter or the named counter it uses);
- "limit rate N/second accept" (nft, fw4), iptables "-m limit --limit N -j
  ACCEPT" or "--hashlimit-upto N": the excess goes on to the next rule in chain
  order that decides on ICMP. A drop or reject rule, a jump to a chain that
  rejects (fw4's reject_from_wan), or the base chain's drop policy drops it,
  and that rule's counter (or iptables' policy counter) counts it.
Counted drops above 0 are a warning. Drops nothing counts (nft rule without
"counter", nft policy) are reported as info with the command that adds a counter.
In the multi-WAN stale endpoint route case, banIP's "limit rate over 25/second
burst 5 packets counter name cnt_icmpflood drop" ate mwan3's health-check
replies (8951 drops), so mwan3 kept declaring the fiber dead and the tunnel's
endpoint route got stuck on the 5G backup. Fix: raise the limit (banIP: uci
set banip.global.ban_icmplimit=250; elsewhere the limit rule itself).`,
	Run: runICMPRateLimitDrops,
}

func runICMPRateLimitDrops(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		return nil, missing(s, "firewall rules", "nft", "iptables")
	}
	up := uplinks(s)
	var out []finding.Finding
	for _, l := range icmplimit.Find(s.Firewall) {
		iif := strings.Trim(l.Rule.IIf, `"`)
		if iif != "" && !anyUplink(up, iif) {
			continue
		}
		if l.Counted && l.Packets == 0 {
			continue
		}
		out = append(out, icmpFinding(s, l, iif))
	}
	return out, nil
}

// anyUplink reports whether an iifname match (possibly a set) names an uplink.
func anyUplink(up map[string]bool, iif string) bool {
	for dev := range up {
		if ifaceMatches(iif, dev) {
			return true
		}
	}
	return false
}

// isBanIP: the rule is banIP's, on OpenWrt where uci configures it. A table
// called banIP elsewhere (the lab copies its rule) is edited as plain nft.
func isBanIP(s *facts.Snapshot, r facts.FirewallRule) bool {
	return s.OpenWrt != nil && (strings.EqualFold(r.Table, "banip") || strings.Contains(r.CounterName, "icmpflood"))
}

// ruleSource is the command that lists a rule, for evidence.
func ruleSource(r facts.FirewallRule) string {
	switch {
	case r.Backend != "iptables":
		return "nft list ruleset"
	case r.Family == "ip6":
		return "ip6tables-save -c"
	}
	return "iptables-save -c"
}

// ruleName names a rule in its chain: nft by handle, iptables by position.
func ruleName(r facts.FirewallRule) string {
	if r.Backend == "iptables" {
		return fmt.Sprintf("%s %s %s rule %d", r.Family, r.Table, r.Chain, r.Position)
	}
	return fmt.Sprintf("%s %s %s handle %d", r.Family, r.Table, r.Chain, r.Handle)
}

// limitText is the limit as people write it: "25/second burst 5 packets per ip saddr".
func limitText(r facts.FirewallRule) string {
	t := fmt.Sprintf("%d/%s burst %d %s", r.Limit.Rate, r.Limit.Per, r.Limit.Burst, r.Limit.Unit)
	if r.Meter != "" {
		t += " per key of " + r.Meter
	}
	return t
}

func icmpFinding(s *facts.Snapshot, l icmplimit.Limiter, iif string) finding.Finding {
	r := l.Rule
	where := "every interface"
	if but, ok := strings.CutPrefix(iif, "!"); ok {
		where = "every interface but " + but
	} else if iif != "" {
		where = iif
	}
	dropper := "the rule itself"
	switch {
	case l.Policy != nil:
		dropper = fmt.Sprintf("the %s policy of chain %s", strings.ToUpper(l.Policy.Policy), l.Policy.Name)
	case !l.Over && l.Drop != nil:
		dropper = "rule " + ruleName(*l.Drop)
		if l.Drop.Text != "" {
			dropper += " (" + l.Drop.Text + ")"
		}
	}
	f := finding.Finding{
		ID:       catalog.ICMPRatelimitDrops,
		Severity: finding.Warning,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("ICMP rate limit (%s) in %s %s/%s dropped %d packets on %s", limitText(r), r.Family, r.Table, r.Chain, l.Packets, where),
		Detail: "ICMP beyond the limit is dropped before it reaches a socket, including the replies to the uplink health checks " +
			"(mwan3, telegraf, ping -c 1 loops) that arrive in bursts. Failed checks make the uplink look dead, routes flap to the " +
			"backup, and a route created in that moment can stay there.",
		Evidence: []finding.Evidence{{Source: ruleSource(r), Key: fmt.Sprintf("%s %s %s", r.Family, r.Table, r.Chain), Value: r.Text}},
	}
	if !l.Over {
		f.Title = fmt.Sprintf("ICMP rate limit (%s, accept up to it) in %s %s/%s: %s dropped %d packets on %s",
			limitText(r), r.Family, r.Table, r.Chain, dropper, l.Packets, where)
		f.Detail = "The rule accepts ICMP up to the rate and " + dropper + " drops the rest (its counter counts all it drops, " +
			"ICMP or not). " + f.Detail
		f.Evidence = append(f.Evidence, finding.Evidence{Source: ruleSource(r), Key: "drops what the limit does not accept", Value: dropper})
	}
	counter := finding.Evidence{Source: ruleSource(r), Key: "rule counter", Value: utoa(l.Packets) + " packets", Threshold: "0"}.Of(float64(l.Packets), finding.Packets)
	switch {
	case l.Counter != nil && l.Counter.CounterName != "":
		counter.Key = "counter " + l.Counter.CounterName
	case l.Counter != nil && l.Counter != l.Drop:
		counter.Key = "counter of " + ruleName(*l.Counter)
	case l.Counter == nil && l.Policy != nil && l.Counted:
		counter.Key = "policy counter of " + l.Policy.Name
	}
	if !l.Counted {
		return uncountedFinding(s, f, l, dropper, where)
	}
	f.Evidence = append(f.Evidence, counter)
	f.Fixes = raiseFixes(s, r)
	return f
}

// uncountedFinding: the excess is dropped where nothing counts it, so the
// drops cannot be proven from the ruleset; say so and show the counter to add.
func uncountedFinding(s *facts.Snapshot, f finding.Finding, l icmplimit.Limiter, dropper, where string) finding.Finding {
	r := l.Rule
	f.Severity = finding.Info
	f.Title = fmt.Sprintf("ICMP rate limit (%s) in %s %s/%s on %s: %s drops the excess and nothing counts it",
		limitText(r), r.Family, r.Table, r.Chain, where, dropper)
	f.Detail += " No counter counts these drops, so whether health checks lose replies here is unknown: add one, " +
		"then run wgperf again (or \"wgperf icmp-burst\", which compares the counters before and after)."
	f.Evidence = append(f.Evidence, finding.Evidence{Source: ruleSource(r), Key: "counter", Value: "none", Threshold: "a counter"})
	const desc = "Count what the limit drops"
	proto := "icmp"
	if p := strings.ToLower(r.Protocol); strings.Contains(p, "icmpv6") || strings.Contains(p, "ipv6-icmp") || r.Family == "ip6" {
		proto = "icmpv6"
	}
	var fix finding.Fix
	var err error
	switch {
	case l.Policy != nil:
		fix, err = remedy.NftCountPolicy(desc+" (a counted drop at the end of the chain, as its policy would)",
			l.Policy.Family, l.Policy.Table, l.Policy.Name, proto)
	case l.Drop != nil:
		d := *l.Drop
		fix, err = remedy.NftCountRule(desc, remedy.NftRule{Family: d.Family, Table: d.Table, Chain: d.Chain, Handle: d.Handle, Text: d.Text})
	}
	if err == nil && fix.Description != "" {
		f.Fixes = append(f.Fixes, fix)
	}
	return f
}

// raiseFixes raise the limit where it is written: banIP's uci option, the nft
// rule by handle, or the iptables rule in place.
func raiseFixes(s *facts.Snapshot, r facts.FirewallRule) []finding.Fix {
	switch {
	case isBanIP(s, r):
		rem, err := remedy.BanIPLimit(icmpLimitRaised)
		return fixes(fmt.Sprintf("Raise banIP's ICMP limit to %d/second", icmpLimitRaised), rem, err)
	case r.Backend == "iptables":
		rem, err := remedy.IptablesLimit(remedy.IptablesRule{Family: r.Family, Table: r.Table, Chain: r.Chain, Position: r.Position, Text: r.Text}, icmpLimitRaised)
		return fixes(fmt.Sprintf("Raise the rule's limit to %d/second (and where your firewall configuration defines it)", icmpLimitRaised), rem, err)
	}
	rule := remedy.NftRule{Family: r.Family, Table: r.Table, Chain: r.Chain, Handle: r.Handle, Text: r.Text}
	rem, err := remedy.NftReplaceRule(rule, icmpLimitRaised)
	return fixes(fmt.Sprintf("Raise the rule's limit to %d/second", icmpLimitRaised), rem, err)
}
