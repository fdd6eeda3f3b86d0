package parse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// nftObject is one element of the "nftables" array of "nft -j list ruleset".
type nftObject struct {
	Chain *struct {
		Family, Table, Name, Hook, Policy string
	} `json:"chain"`
	Rule *struct {
		Family string            `json:"family"`
		Table  string            `json:"table"`
		Chain  string            `json:"chain"`
		Handle int               `json:"handle"`
		Expr   []json.RawMessage `json:"expr"`
	} `json:"rule"`
	Counter *struct {
		Family  string `json:"family"`
		Table   string `json:"table"`
		Name    string `json:"name"`
		Packets uint64 `json:"packets"`
		Bytes   uint64 `json:"bytes"`
	} `json:"counter"`
}

// ParseNftRuleset parses "nft -j list ruleset" into rules and named counters. A
// rule that references a named counter ("counter name X") gets that counter's
// values. Rule Text is empty here; ParseNftText supplies it.
func ParseNftRuleset(r io.Reader) ([]facts.FirewallRule, []facts.NamedCounter, error) {
	fw, err := ParseNftFirewall(r)
	return fw.Rules, fw.Counters, err
}

// ParseNftFirewall is ParseNftRuleset with the chains (hook and policy) too.
// Rules keep the order nft lists them in, which is their order in the chain.
func ParseNftFirewall(r io.Reader) (facts.Firewall, error) {
	var doc struct {
		Nftables []nftObject `json:"nftables"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return facts.Firewall{}, fmt.Errorf("nft -j: %w", err)
	}
	if doc.Nftables == nil {
		return facts.Firewall{}, fmt.Errorf("nft -j: no \"nftables\" array")
	}
	hooks := map[string]string{}
	fw := facts.Firewall{Nftables: true, Rules: []facts.FirewallRule{}, Counters: []facts.NamedCounter{}}
	for _, o := range doc.Nftables {
		switch {
		case o.Chain != nil:
			c := o.Chain
			hooks[c.Family+" "+c.Table+" "+c.Name] = c.Hook
			fw.Chains = append(fw.Chains, facts.FirewallChain{Backend: "nft", Family: c.Family, Table: c.Table, Name: c.Name, Hook: c.Hook, Policy: c.Policy})
		case o.Counter != nil:
			c := o.Counter
			fw.Counters = append(fw.Counters, facts.NamedCounter{Family: c.Family, Table: c.Table, Name: c.Name, Packets: c.Packets, Bytes: c.Bytes})
		case o.Rule != nil:
			rule := facts.FirewallRule{Backend: "nft", Family: o.Rule.Family, Table: o.Rule.Table, Chain: o.Rule.Chain, Handle: o.Rule.Handle}
			for _, e := range o.Rule.Expr {
				if err := nftExpr(&rule, e); err != nil {
					return facts.Firewall{}, fmt.Errorf("nft -j: %s %s %s handle %d: %v", rule.Family, rule.Table, rule.Chain, rule.Handle, err)
				}
			}
			fw.Rules = append(fw.Rules, rule)
		}
	}
	for i := range fw.Rules {
		r := &fw.Rules[i]
		r.Hook = hooks[r.Family+" "+r.Table+" "+r.Chain]
		if r.CounterName == "" {
			continue
		}
		for _, c := range fw.Counters {
			if c.Family == r.Family && c.Table == r.Table && c.Name == r.CounterName {
				r.Packets, r.Bytes = c.Packets, c.Bytes
			}
		}
	}
	return fw, nil
}

// l4protos are protocols whose header match implies the rule's l4 protocol.
var l4protos = map[string]bool{"tcp": true, "udp": true, "icmp": true, "icmpv6": true, "ipv6-icmp": true, "sctp": true, "udplite": true}

// nftExpr lifts what checks need out of one rule expression.
func nftExpr(rule *facts.FirewallRule, raw json.RawMessage) error {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	for kind, body := range e {
		switch kind {
		case "match":
			var m struct {
				Op    string          `json:"op"`
				Left  json.RawMessage `json:"left"`
				Right json.RawMessage `json:"right"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				return fmt.Errorf("match: %v", err)
			}
			nftMatch(rule, m.Op, m.Left, m.Right)
		case "limit":
			lim, err := nftLimit(body)
			if err != nil {
				return err
			}
			rule.Limit = lim
		case "meter":
			// "ip saddr meter NAME { ip saddr limit rate over N/second }": a limit per key.
			var m struct {
				Name string          `json:"name"`
				Stmt json.RawMessage `json:"stmt"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				return fmt.Errorf("meter: %v", err)
			}
			if err := nftKeyedLimit(rule, m.Name, []json.RawMessage{m.Stmt}); err != nil {
				return err
			}
		case "set":
			// "update @NAME { ip saddr limit rate over N/second }": a dynamic set
			// keeping a limit per key, as nft lists meters today. A plain
			// "set" statement without statements of its own carries no limit.
			var st struct {
				Op   string            `json:"op"`
				Set  string            `json:"set"`
				Stmt []json.RawMessage `json:"stmt"`
			}
			if json.Unmarshal(body, &st) != nil || len(st.Stmt) == 0 {
				continue
			}
			if err := nftKeyedLimit(rule, strings.TrimPrefix(st.Set, "@"), st.Stmt); err != nil {
				return err
			}
		case "counter":
			rule.HasCounter = true
			var name string
			if json.Unmarshal(body, &name) == nil {
				rule.CounterName = name
				continue
			}
			var c struct{ Packets, Bytes uint64 }
			if err := json.Unmarshal(body, &c); err != nil {
				return fmt.Errorf("counter: %v", err)
			}
			rule.Packets, rule.Bytes = c.Packets, c.Bytes
		case "accept", "drop", "return", "continue", "queue":
			rule.Verdict = kind
		case "reject":
			rule.Verdict = "reject"
		case "jump", "goto":
			var j struct{ Target string }
			if err := json.Unmarshal(body, &j); err != nil {
				return fmt.Errorf("%s: %v", kind, err)
			}
			rule.Verdict = kind + " " + j.Target
		case "notrack":
			rule.NoTrack = true
		case "mangle":
			var m struct {
				Key struct {
					TCPOption *struct{ Name, Field string } `json:"tcp option"`
				} `json:"key"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				return fmt.Errorf("mangle: %v", err)
			}
			if m.Key.TCPOption == nil || m.Key.TCPOption.Name != "maxseg" {
				continue
			}
			rule.Protocol = "tcp"
			var n uint64
			if json.Unmarshal(m.Value, &n) == nil {
				rule.MSSClamp = strconv.FormatUint(n, 10)
			} else if strings.Contains(string(m.Value), `"mtu"`) {
				rule.MSSClamp = "pmtu"
			}
		}
	}
	return nil
}

// nftLimit reads a "limit" statement's body.
func nftLimit(body json.RawMessage) (*facts.RateLimit, error) {
	var l struct {
		Rate      uint64 `json:"rate"`
		Burst     uint64 `json:"burst"`
		Per       string `json:"per"`
		Inv       bool   `json:"inv"`
		RateUnit  string `json:"rate_unit"`
		BurstUnit string `json:"burst_unit"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("limit: %v", err)
	}
	lim := &facts.RateLimit{Rate: l.Rate, Per: l.Per, Burst: l.Burst, Unit: "packets", Over: l.Inv}
	if l.RateUnit != "" && l.RateUnit != "packets" {
		lim.Unit = "bytes"
		lim.Rate *= byteUnit(l.RateUnit)
		lim.Burst *= byteUnit(l.BurstUnit)
	}
	return lim, nil
}

// nftKeyedLimit takes the limit among a meter's or set update's statements.
func nftKeyedLimit(rule *facts.FirewallRule, name string, stmts []json.RawMessage) error {
	for _, raw := range stmts {
		var st struct {
			Limit json.RawMessage `json:"limit"`
		}
		if json.Unmarshal(raw, &st) != nil || st.Limit == nil {
			continue
		}
		lim, err := nftLimit(st.Limit)
		if err != nil {
			return fmt.Errorf("meter %s: %v", name, err)
		}
		rule.Limit, rule.Meter = lim, name
	}
	return nil
}

// nftMatch reads interface and protocol matches; other matches are left to Text.
// A negated interface match keeps iptables' "!" in front ("!lo,br-lan": any
// interface but these).
func nftMatch(rule *facts.FirewallRule, op string, left, right json.RawMessage) {
	var l struct {
		Meta    *struct{ Key string } `json:"meta"`
		Payload *struct {
			Protocol string `json:"protocol"`
			Field    string `json:"field"`
		} `json:"payload"`
		Concat []json.RawMessage `json:"concat"`
	}
	if json.Unmarshal(left, &l) != nil {
		return
	}
	switch {
	case l.Meta != nil && (l.Meta.Key == "iifname" || l.Meta.Key == "oifname"):
		name := nftStrings(right)
		if op == "!=" {
			name = "!" + name
		}
		if l.Meta.Key == "iifname" {
			rule.IIf = name
		} else {
			rule.OIf = name
		}
	case l.Meta != nil && l.Meta.Key == "l4proto":
		rule.Protocol = nftStrings(right)
	case l.Payload != nil && l.Payload.Protocol == "ip" && l.Payload.Field == "protocol",
		l.Payload != nil && l.Payload.Protocol == "ip6" && l.Payload.Field == "nexthdr":
		rule.Protocol = nftStrings(right)
	case l.Payload != nil && l4protos[l.Payload.Protocol] && rule.Protocol == "":
		rule.Protocol = l.Payload.Protocol
	case l.Concat != nil:
		// "meta nfproto . meta l4proto { ipv4 . icmp }": take the l4proto column.
		col := -1
		for i, c := range l.Concat {
			if strings.Contains(string(c), `"l4proto"`) {
				col = i
			}
		}
		if col < 0 {
			return
		}
		var set struct {
			Set []struct {
				Concat []json.RawMessage `json:"concat"`
			} `json:"set"`
		}
		if json.Unmarshal(right, &set) != nil {
			return
		}
		var protos []string
		for _, el := range set.Set {
			if col < len(el.Concat) {
				var p string
				if json.Unmarshal(el.Concat[col], &p) == nil {
					protos = append(protos, p)
				}
			}
		}
		rule.Protocol = strings.Join(protos, ",")
	}
}

// nftStrings renders a match's right side: a string, or an anonymous set of
// strings joined with ",".
func nftStrings(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var set struct{ Set []json.RawMessage }
	if json.Unmarshal(raw, &set) == nil {
		var parts []string
		for _, el := range set.Set {
			if json.Unmarshal(el, &s) == nil {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ",")
	}
	return ""
}

func byteUnit(u string) uint64 {
	switch u {
	case "kbytes":
		return 1 << 10
	case "mbytes":
		return 1 << 20
	case "gbytes":
		return 1 << 30
	}
	return 1
}

var nftHandle = regexp.MustCompile(`^(.*?)\s*# handle (\d+)$`)

// ParseNftText parses "nft -a list ruleset" and returns each rule's text keyed
// by "family table chain handle", to fill FirewallRule.Text.
func ParseNftText(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	var family, table, chain string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		m := nftHandle.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		body, handle := m[1], m[2]
		f := strings.Fields(body)
		switch {
		case len(f) >= 3 && f[0] == "table" && strings.HasSuffix(body, "{"):
			family, table, chain = f[1], f[2], ""
		case len(f) >= 2 && f[0] == "chain" && strings.HasSuffix(body, "{"):
			chain = f[1]
		case strings.HasSuffix(body, "{"):
			chain = "" // set, map, counter, flowtable blocks
		case chain != "":
			out[NftRuleKey(family, table, chain, handle)] = body
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nft -a list ruleset: %w", err)
	}
	return out, nil
}

// NftRuleKey is how ParseNftText keys a rule's text.
func NftRuleKey(family, table, chain, handle string) string {
	return family + " " + table + " " + chain + " " + handle
}
