package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/icmplimit"
	"github.com/wgperf/wgperf/internal/remedy"
)

var icmpFragNeededDropped = Check{
	Doc: `Looks for firewall rules (nft and iptables, IPv4 and IPv6) that drop or
reject the ICMP errors path MTU discovery runs on: "fragmentation needed"
(ICMP type 3 code 4) and ICMPv6 "packet too big" (type 2). A rule counts when
it matches them (by type and code, by a set that holds them, or by dropping all
ICMP), sits in an input, forward or output path (a base chain on those hooks,
prerouting and postrouting included, or a chain one of them jumps to) and no
earlier rule of its chain accepts them first ("ct state related accept" does:
the errors are related to the connection they report on). A rate limit's
excess drop is icmp.ratelimit-drops', not this. Warning; the counter says what
it dropped. The PMTUD black hole case: ICMP was disabled site-wide, so the
"fragmentation needed" of a narrower hop never reached the sender and one
direction ran at 30 KB/s. Lowering the MTU and clamping the MSS work around it;
letting these errors through is the cure, and the fix inserts the accept right
before the rule that drops them.`,
	Run: runICMPFragNeededDropped,
}

func runICMPFragNeededDropped(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		return nil, missing(s, "firewall rules", "nft", "iptables")
	}
	var out []finding.Finding
	for _, d := range ptbDrops(s.Firewall) {
		out = append(out, ptbDropFinding(s, d))
	}
	return out, nil
}

// ptbDrop is a rule that drops the ICMP errors path MTU discovery needs.
type ptbDrop struct {
	rule  facts.FirewallRule
	hooks []string // the hooks whose packets reach it
	icmp  []string // remedy.FragNeeded and/or remedy.PacketTooBig
	all   bool     // it drops all ICMP of its families, not only these errors
}

// ptbDrops lists the rules of fw that drop frag-needed or packet-too-big
// before anything accepts them, in rule order.
func ptbDrops(fw facts.Firewall) []ptbDrop {
	reached := chainHooks(fw)
	excess := map[string]bool{} // the drops of rate limits: icmp.ratelimit-drops reports those
	for _, l := range icmplimit.Find(fw) {
		if l.Drop != nil {
			excess[firewall.RuleKey(*l.Drop)] = true
		}
	}
	accepted := map[string]map[string]bool{} // chain → ICMP errors an earlier rule accepts
	var out []ptbDrop
	for _, r := range fw.Rules {
		k := ruleChainKey(r)
		hooks := reached[k]
		if len(hooks) == 0 {
			continue
		}
		icmp, all := ptbMatch(r)
		if len(icmp) == 0 && ctRelatedAccept(r) {
			// The errors are related to the connection they report on.
			icmp = []string{remedy.FragNeeded, remedy.PacketTooBig}
		}
		if len(icmp) == 0 {
			continue
		}
		switch strings.ToLower(r.Verdict) {
		case "accept":
			if r.IIf == "" && r.OIf == "" && r.Limit == nil {
				if accepted[k] == nil {
					accepted[k] = map[string]bool{}
				}
				for _, t := range icmp {
					accepted[k][t] = true
				}
			}
		case "drop", "reject":
			if r.Limit != nil || excess[firewall.RuleKey(r)] || ctStateMatch(r) {
				continue
			}
			var dropped []string
			for _, t := range icmp {
				if !accepted[k][t] {
					dropped = append(dropped, t)
				}
			}
			if len(dropped) > 0 {
				out = append(out, ptbDrop{rule: r, hooks: hooks, icmp: dropped, all: all})
			}
		}
	}
	return out
}

// ruleChainKey names a rule's chain across backends.
func ruleChainKey(r facts.FirewallRule) string {
	return r.Backend + " " + r.Family + " " + r.Table + " " + r.Chain
}

// pathHooks are the hooks an ICMP error passes on its way into, through or
// out of a host.
var pathHooks = []string{"prerouting", "input", "forward", "output", "postrouting"}

// chainHooks maps each chain to the hooks whose packets reach it: base chains
// their own, regular chains those of the chains that jump or go to them.
func chainHooks(fw facts.Firewall) map[string][]string {
	out := map[string][]string{}
	add := func(k, hook string) bool {
		if slices.Contains(out[k], hook) {
			return false
		}
		out[k] = append(out[k], hook)
		return true
	}
	for _, c := range fw.Chains {
		if slices.Contains(pathHooks, c.Hook) {
			add(c.Backend+" "+c.Family+" "+c.Table+" "+c.Name, c.Hook)
		}
	}
	for _, r := range fw.Rules {
		if slices.Contains(pathHooks, r.Hook) {
			add(ruleChainKey(r), r.Hook)
		}
	}
	// Follow jumps until nothing new is reached (chains are finite; a loop adds nothing).
	for changed := true; changed; {
		changed = false
		for _, r := range fw.Rules {
			verb, target, ok := strings.Cut(r.Verdict, " ")
			if !ok || (verb != "jump" && verb != "goto") {
				continue
			}
			to := r.Backend + " " + r.Family + " " + r.Table + " " + target
			for _, h := range out[ruleChainKey(r)] {
				changed = add(to, h) || changed
			}
		}
	}
	return out
}

// ptbMatch says which PMTUD errors a rule matches (remedy.FragNeeded,
// remedy.PacketTooBig) and whether it matches all ICMP of those families; none
// when it cannot match them, or when a negation makes it unclear.
func ptbMatch(r facts.FirewallRule) (icmp []string, all bool) {
	if r.Backend == "iptables" {
		return iptPTBMatch(r)
	}
	text := " " + strings.ToLower(r.Text) + " "
	if strings.Contains(text, "!=") || strings.HasPrefix(r.Protocol, "!") {
		return nil, false
	}
	protos := strings.ToLower(r.Protocol)
	v4 := strings.Contains(text, " icmp type ") || strings.Contains(text, " icmp code ") || hasProto(protos, "icmp", "1")
	v6 := strings.Contains(text, " icmpv6 type ") || strings.Contains(text, " icmpv6 code ") || hasProto(protos, "icmpv6", "ipv6-icmp", "58")
	all = true
	if v4 && r.Family != "ip6" {
		typ, code := nftField(text, "icmp type"), nftField(text, "icmp code")
		if (typ == "" || inList(typ, "destination-unreachable", "3")) && (code == "" || inList(code, "frag-needed", "4")) {
			icmp = append(icmp, remedy.FragNeeded)
			all = all && typ == "" && code == ""
		}
	}
	if v6 && r.Family != "ip" {
		typ := nftField(text, "icmpv6 type")
		if typ == "" || inList(typ, "packet-too-big", "2") {
			icmp = append(icmp, remedy.PacketTooBig)
			all = all && typ == ""
		}
	}
	return icmp, all && len(icmp) > 0
}

// nftField is the value after "KEY " in an nft rule's text: one word, or a
// whole "{ a, b }" set; "" when the rule has no such match.
func nftField(text, key string) string {
	_, rest, ok := strings.Cut(text, " "+key+" ")
	if !ok {
		return ""
	}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "{") {
		if end := strings.IndexByte(rest, '}'); end > 0 {
			return rest[1:end]
		}
	}
	word, _, _ := strings.Cut(rest, " ")
	return word
}

// inList reports whether a match value (a word or a set's "a, b") holds one of want.
func inList(value string, want ...string) bool {
	for _, v := range strings.Split(value, ",") {
		if slices.Contains(want, strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}

func hasProto(protos string, want ...string) bool {
	for _, p := range strings.Split(protos, ",") {
		if slices.Contains(want, strings.TrimSpace(p)) {
			return true
		}
	}
	return false
}

// iptPTBMatch reads "-p icmp [-m icmp] [--icmp-type T]" (ip6tables: "-p
// ipv6-icmp [--icmpv6-type T]"), as iptables-save prints them (types as numbers).
func iptPTBMatch(r facts.FirewallRule) ([]string, bool) {
	words := strings.Fields(r.Text)
	if slices.Contains(words, "!") {
		return nil, false
	}
	typeOpt, want, proto := "--icmp-type", []string{"3", "3/4", "destination-unreachable", "fragmentation-needed"}, "icmp"
	wantProto := []string{"icmp", "1"}
	if r.Family == "ip6" {
		typeOpt, want, proto = "--icmpv6-type", []string{"2", "2/0", "packet-too-big"}, "icmpv6"
		wantProto = []string{"icmpv6", "ipv6-icmp", "58"}
	}
	if !slices.Contains(wantProto, strings.ToLower(r.Protocol)) {
		return nil, false
	}
	t := remedy.FragNeeded
	if proto == "icmpv6" {
		t = remedy.PacketTooBig
	}
	i := slices.Index(words, typeOpt)
	if i < 0 {
		return []string{t}, true
	}
	if i+1 < len(words) && slices.Contains(want, strings.ToLower(words[i+1])) {
		return []string{t}, false
	}
	return nil, false
}

// ctStateMatch reports a rule restricted by connection tracking state: it
// drops only some ICMP errors (invalid ones, say), and "new" never holds an error.
func ctStateMatch(r facts.FirewallRule) bool {
	t := strings.ToLower(r.Text)
	return strings.Contains(t, "ct state") || strings.Contains(t, "--ctstate") || strings.Contains(t, "--state")
}

// ctRelatedAccept reports a rule that accepts packets related to a tracked
// connection ("ct state established,related accept", iptables "--ctstate
// RELATED,ESTABLISHED -j ACCEPT"), ICMP errors among them.
func ctRelatedAccept(r facts.FirewallRule) bool {
	t := strings.ToLower(r.Text)
	return strings.ToLower(r.Verdict) == "accept" && ctStateMatch(r) && strings.Contains(t, "related") &&
		!strings.Contains(t, "!=") && !strings.Contains(t, "! --")
}

// ptbErrorsText names the errors a drop takes, for people.
func ptbErrorsText(icmp []string) string {
	var names []string
	for _, t := range icmp {
		switch t {
		case remedy.FragNeeded:
			names = append(names, `ICMP "fragmentation needed" (type 3 code 4)`)
		case remedy.PacketTooBig:
			names = append(names, `ICMPv6 "packet too big" (type 2)`)
		}
	}
	return strings.Join(names, " and ")
}

func ptbDropFinding(s *facts.Snapshot, d ptbDrop) finding.Finding {
	r := d.rule
	what := ptbErrorsText(d.icmp)
	if d.all {
		what = "all ICMP, " + what + " included"
	}
	dir := "on their way in, through or out of this host"
	switch {
	case slices.Contains(d.hooks, "output") || slices.Contains(d.hooks, "postrouting"):
		dir = "that this host sends to hosts whose packets it forwards (LAN hosts never learn the tunnel's smaller MTU)"
	case slices.Contains(d.hooks, "forward"):
		dir = "that routers beyond this host send to the hosts behind it"
	case slices.Contains(d.hooks, "input") || slices.Contains(d.hooks, "prerouting"):
		dir = "that routers on the path send to this host"
	}
	f := finding.Finding{
		ID:       catalog.ICMPFragNeededDropped,
		Severity: finding.Warning,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("Firewall rule %s drops %s", ruleName(r), what),
		Detail: "Path MTU discovery tells a sender its packets are too big for a hop with these ICMP errors. This rule drops the ones " +
			dir + ", so a sender that sets DF keeps sending packets that vanish: bulk TCP through a narrower hop stalls while " +
			"small packets (ssh, pings) pass. Lowering the MTU and clamping the MSS work around it; letting these errors through " +
			"cures it. (Kernel WireGuard clears DF on its own outer packets, so the tunnel itself fragments rather than stalls; " +
			"the traffic inside it, and every other sender, still depends on these errors.)",
		Evidence: []finding.Evidence{
			{Source: ruleSource(r), Key: fmt.Sprintf("%s %s %s (%s)", r.Family, r.Table, r.Chain, strings.Join(d.hooks, ", ")), Value: ruleTextOr(r)},
		},
	}
	if r.HasCounter {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: ruleSource(r), Key: "rule counter", Value: utoa(r.Packets) + " packets",
			Threshold: "0 (every packet it dropped; " + what + " among them)"}.Of(float64(r.Packets), finding.Packets))
	}
	f.Fixes = ptbAllowFixes(r, d.icmp)
	return f
}

// ruleTextOr is a rule's text, or where to find it when nft gave none.
func ruleTextOr(r facts.FirewallRule) string {
	if r.Text != "" {
		return r.Text
	}
	return "(see nft -a list chain " + r.Family + " " + r.Table + " " + r.Chain + ")"
}

// ptbAllowFixes insert the accept before the dropping rule, in its own chain.
func ptbAllowFixes(r facts.FirewallRule, icmp []string) []finding.Fix {
	desc := fmt.Sprintf("Let %s through before %s (the cure: path MTU discovery works again)", ptbErrorsText(icmp), ruleName(r))
	if r.Backend == "iptables" {
		rem, err := remedy.IptablesAllowPMTUD(remedy.IptablesRule{Family: r.Family, Table: r.Table, Chain: r.Chain, Position: r.Position, Text: r.Text})
		return fixes(desc, rem, err)
	}
	rem, err := remedy.NftAllowPMTUD(remedy.NftRule{Family: r.Family, Table: r.Table, Chain: r.Chain, Handle: r.Handle, Text: r.Text}, icmp)
	return fixes(desc, rem, err)
}
