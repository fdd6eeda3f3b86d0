package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// icmpLimitRaised is the rate the multi-WAN case raised banIP's ICMP limit to: far above
// any health-check burst, still a flood guard.
const icmpLimitRaised = 250

var icmpRateLimitDrops = Check{
	ID:    finding.ICMPRatelimitDrops,
	Title: "An ICMP rate-limit rule has dropped packets on an uplink",
	Doc: `Looks for firewall rules that match ICMP (or ICMPv6), carry a rate limit
that drops what exceeds it ("limit rate over N/second ... drop"), apply to an
uplink (no input interface match, or the device of a default or endpoint route)
and whose counter — the rule's own or the named counter it uses — is above 0.
In the multi-WAN stale endpoint route case, banIP's "limit rate over 25/second burst 5 packets counter name
cnt_icmpflood drop" ate mwan3's health-check replies (8951 drops), so mwan3
kept declaring the fiber dead and the tunnel's endpoint route got stuck on the
5G backup. Fix: raise the limit (uci set banip.global.ban_icmplimit=250).`,
	Run: runICMPRateLimitDrops,
}

func runICMPRateLimitDrops(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		return nil, missing(s, "firewall rules", "nft", "iptables")
	}
	up := uplinks(s)
	var out []finding.Finding
	for _, r := range s.Firewall.Rules {
		if r.Limit == nil || !isICMPRule(r) || !dropsOverLimit(r) {
			continue
		}
		iif := strings.Trim(r.IIf, `"`)
		if iif != "" && !anyUplink(up, iif) {
			continue
		}
		pkts := rulePackets(s, r)
		if pkts == 0 {
			continue
		}
		out = append(out, icmpFinding(s, r, iif, pkts))
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

// isICMPRule: the protocol match (possibly a set, "icmp,icmpv6") names ICMP;
// without one, the rule text must mention it.
func isICMPRule(r facts.FirewallRule) bool {
	if r.Protocol == "" {
		return strings.Contains(strings.ToLower(r.Text), "icmp")
	}
	for _, p := range strings.Split(strings.ToLower(r.Protocol), ",") {
		switch strings.TrimSpace(p) {
		case "icmp", "icmpv6", "ipv6-icmp", "icmp6":
			return true
		}
	}
	return false
}

// dropsOverLimit: nft "limit rate over N ... drop", or an iptables-style rule
// whose limit is inverted and whose verdict drops.
func dropsOverLimit(r facts.FirewallRule) bool {
	v := strings.ToLower(r.Verdict)
	return r.Limit.Over && (v == "drop" || v == "reject")
}

// rulePackets is the rule's own counter, or the named counter it references.
func rulePackets(s *facts.Snapshot, r facts.FirewallRule) uint64 {
	if r.Packets > 0 || r.CounterName == "" {
		return r.Packets
	}
	for _, c := range s.Firewall.Counters {
		if c.Name == r.CounterName && c.Table == r.Table && (r.Family == "" || c.Family == r.Family) {
			return c.Packets
		}
	}
	return 0
}

// isBanIP: the rule is banIP's, on OpenWrt where uci configures it. A table
// called banIP elsewhere (the lab copies its rule) is edited as plain nft.
func isBanIP(s *facts.Snapshot, r facts.FirewallRule) bool {
	return s.OpenWrt != nil && (strings.EqualFold(r.Table, "banip") || strings.Contains(r.CounterName, "icmpflood"))
}

func icmpFinding(s *facts.Snapshot, r facts.FirewallRule, iif string, pkts uint64) finding.Finding {
	where := "every interface"
	if iif != "" {
		where = iif
	}
	rate := fmt.Sprintf("%d/%s burst %d %s", r.Limit.Rate, r.Limit.Per, r.Limit.Burst, r.Limit.Unit)
	counterKey := "rule counter"
	if r.CounterName != "" {
		counterKey = "counter " + r.CounterName
	}
	f := finding.Finding{
		ID:       finding.ICMPRatelimitDrops,
		Severity: finding.Warning,
		Host:     hostName(s),
		Title:    fmt.Sprintf("ICMP rate limit (%s) in %s %s/%s dropped %d packets on %s", rate, r.Family, r.Table, r.Chain, pkts, where),
		Detail: "ICMP beyond the limit is dropped before it reaches a socket, including the replies to the uplink health checks " +
			"(mwan3, telegraf, ping -c 1 loops) that arrive in bursts. Failed checks make the uplink look dead, routes flap to the " +
			"backup, and a route created in that moment can stay there.",
		Evidence: []finding.Evidence{
			{Source: "nft list ruleset", Key: fmt.Sprintf("%s %s %s", r.Family, r.Table, r.Chain), Value: r.Text},
			{Source: "nft list ruleset", Key: counterKey, Value: utoa(pkts) + " packets", Threshold: "0"},
		},
	}
	if r.Backend == "iptables" {
		f.Evidence[0].Source, f.Evidence[1].Source = "iptables-save", "iptables-save -c"
	}
	rule := remedy.NftRule{Family: r.Family, Table: r.Table, Chain: r.Chain, Handle: r.Handle, Text: r.Text}
	switch {
	case isBanIP(s, r):
		rem, err := remedy.BanIPLimit(icmpLimitRaised)
		f.Fixes = append(f.Fixes, fixes(fmt.Sprintf("Raise banIP's ICMP limit to %d/second", icmpLimitRaised), rem, err)...)
	case r.Backend == "iptables":
		rem, err := remedy.IptablesLimit(rule, icmpLimitRaised)
		f.Fixes = append(f.Fixes, fixes(fmt.Sprintf("Raise the rule's limit to %d/second (edit the rule in your firewall configuration)", icmpLimitRaised), rem, err)...)
	default:
		rem, err := remedy.NftReplaceRule(rule, icmpLimitRaised)
		f.Fixes = append(f.Fixes, fixes(fmt.Sprintf("Raise the rule's limit to %d/second", icmpLimitRaised), rem, err)...)
	}
	return f
}
