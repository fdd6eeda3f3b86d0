// Package icmplimit finds rate limits on ICMP in a firewall and the rule, or
// chain policy, that drops what each limit does not let through. A limit is
// written two ways: "drop what is over N" (nft limit rate over, hashlimit
// --hashlimit-above) drops by itself; "accept up to N" (nft limit rate N
// accept, iptables -m limit/-m hashlimit --hashlimit-upto ... -j ACCEPT) leaves
// the rest to whatever comes next in chain order: a drop or reject rule, a
// jump to a chain that rejects (fw4), or the base chain's drop policy.
// Checks and the icmp-burst probe share it. Pure: facts in, limiters out.
package icmplimit

import (
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// maxDepth bounds jumps followed between chains (fw4: input -> input_wan ->
// reject_from_wan -> handle_reject).
const maxDepth = 6

// Limiter is one ICMP rate limit and where its excess goes.
type Limiter struct {
	Rule facts.FirewallRule // the rule with the limit
	// Over: the limit drops what exceeds it (Drop is Rule). Otherwise it
	// accepts up to the rate and the excess reaches Drop or Policy.
	Over bool
	// Drop is the rule that drops the excess; nil when a chain policy does.
	Drop *facts.FirewallRule
	// Policy is the base chain whose drop policy takes the excess.
	Policy *facts.FirewallChain
	// Counter is the rule whose counter counts the drops: Drop, or a jump on
	// the way to it that counts (fw4 counts "jump handle_reject", not the
	// reject). Nil when the policy counts (iptables) or nothing does.
	Counter *facts.FirewallRule
	Counted bool   // some counter counts the drops (Counter's or the policy's)
	Packets uint64 // the drops counted

	path []*facts.FirewallRule // rules from the limit to the drop, while counting
}

// IsICMP reports whether a rule matches ICMP or ICMPv6: its protocol match
// (possibly a set, "icmp,ipv6-icmp") names one, or without one its text does.
func IsICMP(r facts.FirewallRule) bool {
	if r.Protocol == "" {
		return strings.Contains(strings.ToLower(r.Text), "icmp")
	}
	return len(icmpProtos(r.Protocol)) > 0
}

// icmpProtos are the ICMP protocols in a protocol match, normalised to icmp
// and icmpv6; a negated match ("!icmp") names none.
func icmpProtos(p string) map[string]bool {
	out := map[string]bool{}
	if strings.HasPrefix(p, "!") {
		return out
	}
	for _, s := range strings.Split(strings.ToLower(p), ",") {
		switch strings.TrimSpace(s) {
		case "icmp", "1":
			out["icmp"] = true
		case "icmpv6", "ipv6-icmp", "icmp6", "58":
			out["icmpv6"] = true
		}
	}
	return out
}

// Find lists the ICMP rate limits of fw whose excess is dropped. Rules must
// be in chain order, as the collector keeps them.
func Find(fw facts.Firewall) []Limiter {
	w := walker{fw: fw, chains: map[chainKey][]int{}, info: map[chainKey]*facts.FirewallChain{}}
	for i, r := range fw.Rules {
		k := keyOf(r)
		w.chains[k] = append(w.chains[k], i)
	}
	for i := range fw.Chains {
		c := &fw.Chains[i]
		w.info[chainKey{c.Backend, c.Family, c.Table, c.Name}] = c
	}
	var out []Limiter
	for i := range fw.Rules {
		r := fw.Rules[i]
		if r.Limit == nil || !IsICMP(r) {
			continue
		}
		v := strings.ToLower(r.Verdict)
		var l Limiter
		switch {
		case r.Limit.Over && (v == "drop" || v == "reject"):
			l = Limiter{Rule: r, Over: true, Drop: &fw.Rules[i]}
			l.path = []*facts.FirewallRule{&fw.Rules[i]}
		case !r.Limit.Over && v == "accept":
			res := w.after(r, keyOf(r), w.indexIn(keyOf(r), i)+1, 0)
			if res.outcome != dropped {
				continue
			}
			l = Limiter{Rule: r, Policy: res.policy, path: res.path}
			if len(res.path) > 0 && res.policy == nil {
				l.Drop = res.path[len(res.path)-1]
			}
		default:
			continue
		}
		l.count(fw)
		out = append(out, l)
	}
	return out
}

// count picks the counter: the deepest counting rule on the way to the drop,
// else the policy's counter.
func (l *Limiter) count(fw facts.Firewall) {
	for _, r := range l.path {
		if r.HasCounter {
			l.Counter, l.Counted, l.Packets = r, true, rulePackets(fw, *r)
		}
	}
	if l.Counter == nil && l.Policy != nil && l.Policy.HasCounter {
		l.Counted, l.Packets = true, l.Policy.Packets
	}
	l.path = nil
}

// rulePackets is the rule's own counter, or the named counter it references.
func rulePackets(fw facts.Firewall, r facts.FirewallRule) uint64 {
	if r.Packets > 0 || r.CounterName == "" {
		return r.Packets
	}
	for _, c := range fw.Counters {
		if c.Name == r.CounterName && c.Table == r.Table && (r.Family == "" || c.Family == r.Family) {
			return c.Packets
		}
	}
	return 0
}

type chainKey struct{ backend, family, table, chain string }

func keyOf(r facts.FirewallRule) chainKey { return chainKey{r.Backend, r.Family, r.Table, r.Chain} }

type outcome int

const (
	fellThrough outcome = iota // the chain ended without a verdict: back to the caller
	accepted                   // accepted, or decided in a way this package cannot follow
	dropped
)

type result struct {
	outcome outcome
	path    []*facts.FirewallRule // jumps taken and the dropping rule
	policy  *facts.FirewallChain
}

type walker struct {
	fw     facts.Firewall
	chains map[chainKey][]int // rule indices per chain, in order
	info   map[chainKey]*facts.FirewallChain
}

// indexIn is rule i's place in its chain.
func (w *walker) indexIn(k chainKey, i int) int {
	for j, ri := range w.chains[k] {
		if ri == i {
			return j
		}
	}
	return len(w.chains[k])
}

// after follows the limiter's excess from rule position start of chain k,
// returning to the chain's caller when it falls through a regular chain.
func (w *walker) after(lim facts.FirewallRule, k chainKey, start, depth int) result {
	res := w.walk(lim, k, start, depth)
	if res.outcome != fellThrough || depth > maxDepth {
		return res
	}
	// A regular chain ended: continue after the first rule that jumps to it.
	for i, r := range w.fw.Rules {
		ck := keyOf(r)
		if ck.backend != k.backend || ck.family != k.family || ck.table != k.table {
			continue
		}
		var next result
		switch r.Verdict {
		case "jump " + k.chain:
			next = w.after(lim, ck, w.indexIn(ck, i)+1, depth+1)
		case "goto " + k.chain: // the caller's chain is done too
			next = w.after(lim, ck, len(w.chains[ck]), depth+1)
		default:
			continue
		}
		next.path = append(res.path, next.path...)
		return next
	}
	return result{outcome: accepted}
}

// walk decides what chain k does, from rule position start on, with a packet
// the limiter did not accept.
func (w *walker) walk(lim facts.FirewallRule, k chainKey, start, depth int) result {
	idx := w.chains[k]
	for j := start; j < len(idx); j++ {
		r := &w.fw.Rules[idx[j]]
		if !mayMatch(lim, *r) {
			continue
		}
		v := strings.ToLower(r.Verdict)
		if r.Limit != nil {
			if !r.Limit.Over && v == "accept" {
				// Another "accept up to M" takes the excess: what is dropped
				// after it is its excess, and Find reports it for that limit.
				return result{outcome: accepted}
			}
			continue // a limit that drops over its rate decides only part
		}
		switch {
		case v == "drop" || v == "reject":
			return result{outcome: dropped, path: []*facts.FirewallRule{r}}
		case v == "accept" || v == "queue":
			return result{outcome: accepted}
		case v == "return":
			return result{outcome: fellThrough}
		case strings.HasPrefix(v, "jump ") || strings.HasPrefix(v, "goto "):
			if depth >= maxDepth {
				return result{outcome: accepted}
			}
			target := chainKey{k.backend, k.family, k.table, strings.TrimSpace(r.Verdict[5:])}
			sub := w.walk(lim, target, 0, depth+1)
			if sub.outcome == dropped {
				sub.path = append([]*facts.FirewallRule{r}, sub.path...)
				return sub
			}
			if sub.outcome == accepted || strings.HasPrefix(v, "goto ") {
				return sub
			}
		}
	}
	if c := w.info[k]; c != nil && c.Hook != "" {
		if c.Policy == "drop" {
			return result{outcome: dropped, policy: c}
		}
		return result{outcome: accepted}
	}
	return result{outcome: fellThrough}
}

// mayMatch reports whether rule r can see the packets limiter lim left: an
// ICMP protocol lim matches too (or no protocol match) and the same input
// interface (or none on either side).
func mayMatch(lim, r facts.FirewallRule) bool {
	if r.Protocol != "" {
		want, got := icmpProtos(lim.Protocol), icmpProtos(r.Protocol)
		if len(got) == 0 {
			return false
		}
		if len(want) > 0 {
			shared := false
			for p := range got {
				shared = shared || want[p]
			}
			if !shared {
				return false
			}
		}
	}
	return r.IIf == "" || lim.IIf == "" || r.IIf == lim.IIf
}
