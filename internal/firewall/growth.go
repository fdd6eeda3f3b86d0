// Package firewall compares two reads of a host's firewall (facts.Firewall):
// which rules, drop policies and named counters counted packets in between,
// and how to name a rule in one line. The bench and icmp-burst read the
// firewall before and after a test (collect.ReadFirewall) and report what
// grew; package icmplimit, beside it, finds ICMP rate limits in any form.
package firewall

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// RuleKey names a rule across two reads of a ruleset: nft by handle, iptables
// by position.
func RuleKey(r facts.FirewallRule) string {
	return fmt.Sprintf("%s %s %s %s %d/%d", r.Backend, r.Family, r.Table, r.Chain, r.Handle, r.Position)
}

// ChainKey names a chain across two reads of a ruleset.
func ChainKey(c facts.FirewallChain) string {
	return fmt.Sprintf("%s %s %s %s", c.Backend, c.Family, c.Table, c.Name)
}

// FirewallGrowth is a firewall rule, chain policy or named counter whose
// packet count rose between two reads of a ruleset.
type FirewallGrowth struct {
	Rule    *facts.FirewallRule  `json:"rule,omitempty"`
	Policy  *facts.FirewallChain `json:"policy,omitempty"`  // a base chain whose drop policy counter grew (iptables)
	Counter string               `json:"counter,omitempty"` // "family table name" of a named counter
	Packets uint64               `json:"packets"`           // growth between the reads
}

// FirewallGrown lists the counted rules, drop policies and named counters
// whose packet count rose from before to after, most packets first. A named
// counter is listed through the rule that feeds it (which names the counter
// and says what it matched), not a second time on its own. Rules and chains
// are matched by RuleKey and ChainKey; one that is new in after is left out,
// since its whole count may predate the first read.
func FirewallGrown(before, after facts.Firewall) []FirewallGrowth {
	prev := map[string]uint64{}
	for _, r := range before.Rules {
		prev[RuleKey(r)] = r.Packets
	}
	prevP := map[string]uint64{}
	for _, c := range before.Chains {
		prevP[ChainKey(c)] = c.Packets
	}
	prevC := map[string]uint64{}
	for _, c := range before.Counters {
		prevC[counterKey(c)] = c.Packets
	}
	var out []FirewallGrowth
	fed := map[string]bool{} // named counters a grown rule already stands for
	for _, r := range after.Rules {
		p, ok := prev[RuleKey(r)]
		if !ok || !r.HasCounter || r.Packets <= p {
			continue
		}
		r := r
		g := FirewallGrowth{Rule: &r, Packets: r.Packets - p}
		if r.CounterName != "" {
			g.Counter = r.Family + " " + r.Table + " " + r.CounterName
			fed[g.Counter] = true
		}
		out = append(out, g)
	}
	for _, c := range after.Chains {
		p, ok := prevP[ChainKey(c)]
		if !ok || !c.HasCounter || c.Policy != "drop" || c.Packets <= p {
			continue
		}
		c := c
		out = append(out, FirewallGrowth{Policy: &c, Packets: c.Packets - p})
	}
	for _, c := range after.Counters {
		k := counterKey(c)
		if p, ok := prevC[k]; ok && c.Packets > p && !fed[k] {
			out = append(out, FirewallGrowth{Counter: k, Packets: c.Packets - p})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Packets > out[j].Packets })
	return out
}

func counterKey(c facts.NamedCounter) string { return c.Family + " " + c.Table + " " + c.Name }

// Drops reports whether the growth counts packets the firewall threw away: a
// rule whose verdict is drop or reject, or a chain's drop policy.
func (g FirewallGrowth) Drops() bool {
	return g.Policy != nil || (g.Rule != nil && (g.Rule.Verdict == "drop" || g.Rule.Verdict == "reject"))
}

// String names the counter for people: the rule (DescribeRule), the chain
// policy or the named counter.
func (g FirewallGrowth) String() string {
	switch {
	case g.Policy != nil:
		c := g.Policy
		return fmt.Sprintf("%s %s %s policy %s", c.Family, c.Table, c.Name, strings.ToUpper(c.Policy))
	case g.Rule != nil:
		return DescribeRule(*g.Rule)
	}
	return g.Counter
}

// nftCounterValues is the reading nft prints in a rule's counter statement.
var nftCounterValues = regexp.MustCompile(`\bcounter packets \d+ bytes \d+`)

// DescribeRule names a rule in its chain, as nft and iptables address it
// (handle or position), with its text, or its limit when the text is unknown.
// The text leaves out the counter's reading ("counter packets 1977 bytes
// ..." becomes "counter"): it is the total when the ruleset was read, and
// next to a growth it would read as a second, different count.
func DescribeRule(r facts.FirewallRule) string {
	s := fmt.Sprintf("%s %s %s handle %d", r.Family, r.Table, r.Chain, r.Handle)
	if r.Backend == "iptables" {
		s = fmt.Sprintf("%s %s %s rule %d", r.Family, r.Table, r.Chain, r.Position)
	}
	switch {
	case r.Text != "":
		s += ": " + nftCounterValues.ReplaceAllString(r.Text, "counter")
	case r.Limit != nil:
		over := ""
		if r.Limit.Over {
			over = "over "
		}
		s += fmt.Sprintf(": limit rate %s%d/%s burst %d %s", over, r.Limit.Rate, r.Limit.Per, r.Limit.Burst, r.Limit.Unit)
	}
	if r.CounterName != "" {
		s += " (counter " + r.CounterName + ")"
	}
	return s
}
