package firewall

import (
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
)

func TestDescribeRule(t *testing.T) {
	for _, tt := range []struct {
		rule facts.FirewallRule
		want string
	}{
		{facts.FirewallRule{Backend: "nft", Family: "inet", Table: "t", Chain: "input", Handle: 2,
			Text: "udp dport 51820 numgen random mod 100 < 3 counter packets 1977 bytes 2223552 drop"},
			"inet t input handle 2: udp dport 51820 numgen random mod 100 < 3 counter drop"},
		{facts.FirewallRule{Backend: "iptables", Family: "ip", Table: "filter", Chain: "INPUT", Position: 3, Text: "-A INPUT -p udp -j DROP"},
			"ip filter INPUT rule 3: -A INPUT -p udp -j DROP"},
		{facts.FirewallRule{Backend: "nft", Family: "inet", Table: "banip", Chain: "pre", Handle: 9, CounterName: "cnt_icmp",
			Limit: &facts.RateLimit{Rate: 25, Per: "second", Burst: 5, Unit: "packets", Over: true}},
			"inet banip pre handle 9: limit rate over 25/second burst 5 packets (counter cnt_icmp)"},
	} {
		if got := DescribeRule(tt.rule); got != tt.want {
			t.Errorf("DescribeRule = %q\nwant %q", got, tt.want)
		}
	}
}
