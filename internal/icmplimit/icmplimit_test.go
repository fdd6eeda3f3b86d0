package icmplimit

import (
	"fmt"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
)

// rule is an nft rule in inet t: chain, handle, protocol, verdict, limit
// (0: none; >0: accept up to it; <0: over it), packets (-1: no counter).
func rule(chain string, handle int, proto, verdict string, limit int, packets int) facts.FirewallRule {
	r := facts.FirewallRule{Backend: "nft", Family: "inet", Table: "t", Chain: chain, Handle: handle, Protocol: proto, Verdict: verdict}
	if limit != 0 {
		r.Limit = &facts.RateLimit{Rate: uint64(max(limit, -limit)), Per: "second", Burst: 5, Unit: "packets", Over: limit < 0}
	}
	if packets >= 0 {
		r.HasCounter, r.Packets = true, uint64(packets)
	}
	return r
}

func base(name, policy string) facts.FirewallChain {
	return facts.FirewallChain{Backend: "nft", Family: "inet", Table: "t", Name: name, Hook: "input", Policy: policy}
}

func regular(name string) facts.FirewallChain {
	return facts.FirewallChain{Backend: "nft", Family: "inet", Table: "t", Name: name}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		fw      facts.Firewall
		want    string // "handle of the limit -> handle of the counter (packets)" or "policy", "" for none
		counted bool
	}{
		{"over limit drops by itself", facts.Firewall{Rules: []facts.FirewallRule{rule("in", 1, "icmp", "drop", -25, 7)}, Chains: []facts.FirewallChain{base("in", "accept")}},
			"1 -> 1 (7)", true},
		{"a jump that falls through returns to the caller, whose policy drops", facts.Firewall{
			Rules: []facts.FirewallRule{
				rule("in", 1, "", "jump icmp_guard", 0, -1),
				rule("icmp_guard", 2, "icmp", "accept", 10, 3),
				rule("icmp_guard", 3, "tcp", "drop", 0, 9),
				rule("in", 4, "udp", "accept", 0, -1),
			},
			Chains: []facts.FirewallChain{base("in", "drop"), regular("icmp_guard")}},
			"2 -> policy", false},
		{"return in the called chain, then a counted drop in the caller", facts.Firewall{
			Rules: []facts.FirewallRule{
				rule("in", 1, "", "jump icmp_guard", 0, -1),
				rule("icmp_guard", 2, "icmp", "accept", 10, 3),
				rule("icmp_guard", 3, "", "return", 0, -1),
				rule("in", 4, "icmp", "drop", 0, 11),
			},
			Chains: []facts.FirewallChain{base("in", "accept"), regular("icmp_guard")}},
			"2 -> 4 (11)", true},
		{"goto a rejecting chain, counted on the goto", facts.Firewall{
			Rules: []facts.FirewallRule{
				rule("in", 1, "icmp", "accept", 10, 3),
				rule("in", 2, "", "goto rej", 0, 5),
				rule("rej", 3, "", "reject", 0, -1),
			},
			Chains: []facts.FirewallChain{base("in", "accept"), regular("rej")}},
			"1 -> 2 (5)", true},
		{"a second accept-up-to limit takes the first one's excess: only it is reported", facts.Firewall{
			Rules: []facts.FirewallRule{
				rule("in", 1, "icmp", "accept", 10, 3),
				rule("in", 2, "icmp", "accept", 100, 4),
				rule("in", 3, "icmp", "drop", 0, 6),
			},
			Chains: []facts.FirewallChain{base("in", "accept")}},
			"2 -> 3 (6)", true},
		{"ICMPv6 drop after an ICMP limit in inet: the limit's excess is accepted", facts.Firewall{
			Rules:  []facts.FirewallRule{rule("in", 1, "icmp", "accept", 10, 3), rule("in", 2, "icmpv6", "drop", 0, 6)},
			Chains: []facts.FirewallChain{base("in", "accept")}},
			"", false},
		{"a jump loop ends without a verdict", facts.Firewall{
			Rules: []facts.FirewallRule{
				rule("in", 1, "icmp", "accept", 10, 3),
				rule("in", 2, "", "jump a", 0, -1),
				rule("a", 3, "", "jump b", 0, -1),
				rule("b", 4, "", "jump a", 0, -1),
			},
			Chains: []facts.FirewallChain{base("in", "accept"), regular("a"), regular("b")}},
			"", false},
		{"not ICMP", facts.Firewall{Rules: []facts.FirewallRule{rule("in", 1, "tcp", "drop", -25, 7)}, Chains: []facts.FirewallChain{base("in", "accept")}},
			"", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ls := Find(tc.fw)
			got := ""
			if len(ls) > 1 {
				t.Fatalf("%d limiters: %+v", len(ls), ls)
			}
			if len(ls) == 1 {
				l := ls[0]
				switch {
				case l.Counter != nil:
					got = fmtLimiter(l.Rule.Handle, l.Counter.Handle, l.Packets)
				case l.Policy != nil:
					got = fmtPolicy(l.Rule.Handle)
				}
				if l.Counted != tc.counted {
					t.Errorf("counted %v, want %v", l.Counted, tc.counted)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func fmtLimiter(limit, counter int, packets uint64) string {
	return fmt.Sprintf("%d -> %d (%d)", limit, counter, packets)
}

func fmtPolicy(limit int) string { return fmt.Sprintf("%d -> policy", limit) }
