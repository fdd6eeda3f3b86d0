package collect

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
		Family, Table, Name, Hook string
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
	var doc struct {
		Nftables []nftObject `json:"nftables"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("nft -j: %w", err)
	}
	if doc.Nftables == nil {
		return nil, nil, fmt.Errorf("nft -j: no \"nftables\" array")
	}
	hooks := map[string]string{}
	counters := []facts.NamedCounter{}
	rules := []facts.FirewallRule{}
	for _, o := range doc.Nftables {
		switch {
		case o.Chain != nil:
			hooks[o.Chain.Family+" "+o.Chain.Table+" "+o.Chain.Name] = o.Chain.Hook
		case o.Counter != nil:
			c := o.Counter
			counters = append(counters, facts.NamedCounter{Family: c.Family, Table: c.Table, Name: c.Name, Packets: c.Packets, Bytes: c.Bytes})
		case o.Rule != nil:
			rule := facts.FirewallRule{Backend: "nft", Family: o.Rule.Family, Table: o.Rule.Table, Chain: o.Rule.Chain, Handle: o.Rule.Handle}
			for _, e := range o.Rule.Expr {
				if err := nftExpr(&rule, e); err != nil {
					return nil, nil, fmt.Errorf("nft -j: %s %s %s handle %d: %v", rule.Family, rule.Table, rule.Chain, rule.Handle, err)
				}
			}
			rules = append(rules, rule)
		}
	}
	for i := range rules {
		rules[i].Hook = hooks[rules[i].Family+" "+rules[i].Table+" "+rules[i].Chain]
		if rules[i].CounterName == "" {
			continue
		}
		for _, c := range counters {
			if c.Family == rules[i].Family && c.Table == rules[i].Table && c.Name == rules[i].CounterName {
				rules[i].Packets, rules[i].Bytes = c.Packets, c.Bytes
			}
		}
	}
	return rules, counters, nil
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
				Left  json.RawMessage `json:"left"`
				Right json.RawMessage `json:"right"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				return fmt.Errorf("match: %v", err)
			}
			nftMatch(rule, m.Left, m.Right)
		case "limit":
			var l struct {
				Rate      uint64 `json:"rate"`
				Burst     uint64 `json:"burst"`
				Per       string `json:"per"`
				Inv       bool   `json:"inv"`
				RateUnit  string `json:"rate_unit"`
				BurstUnit string `json:"burst_unit"`
			}
			if err := json.Unmarshal(body, &l); err != nil {
				return fmt.Errorf("limit: %v", err)
			}
			lim := &facts.RateLimit{Rate: l.Rate, Per: l.Per, Burst: l.Burst, Unit: "packets", Over: l.Inv}
			if l.RateUnit != "" && l.RateUnit != "packets" {
				lim.Unit = "bytes"
				lim.Rate *= byteUnit(l.RateUnit)
				lim.Burst *= byteUnit(l.BurstUnit)
			}
			rule.Limit = lim
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

// nftMatch reads interface and protocol matches; other matches are left to Text.
func nftMatch(rule *facts.FirewallRule, left, right json.RawMessage) {
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
			out[nftRuleKey(family, table, chain, handle)] = body
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nft -a list ruleset: %w", err)
	}
	return out, nil
}

func nftRuleKey(family, table, chain, handle string) string {
	return family + " " + table + " " + chain + " " + handle
}
