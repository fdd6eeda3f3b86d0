package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// ptbHost is the recording namespace rcptb-a with one recorded form of a rule
// dropping PMTUD's ICMP errors (testdata/collect/pmtud), read as the collector
// reads it.
func ptbHost(t *testing.T, form string) *facts.Snapshot {
	t.Helper()
	return &facts.Snapshot{Host: targettest.Spec("netns:rcptb-a"), Firewall: recordedFirewall(t, "pmtud", form)}
}

// TestICMPFragNeededDroppedForms: every recorded form that drops
// frag-needed or packet-too-big on a path through the host is found, with
// the counter that saw the errors go, and its fix inserts the accept right
// before the dropping rule, in the rule's own chain.
func TestICMPFragNeededDroppedForms(t *testing.T) {
	tests := []struct {
		form    string
		title   string // a part of the title
		counter string // the counter's value
		fix     string // the fix's first command
	}{
		{"nft-output-unreachable-drop", `rule inet site out handle 2 drops ICMP "fragmentation needed" (type 3 code 4)`, "3 packets",
			`nft 'insert rule inet site out position 2 icmp type destination-unreachable icmp code frag-needed accept comment "wgperf pmtud"'`},
		{"nft-input-fragneeded-drop", "rule ip filter input handle 2 drops ICMP", "3 packets",
			`nft 'insert rule ip filter input position 2 icmp type destination-unreachable icmp code frag-needed accept comment "wgperf pmtud"'`},
		{"nft-forward-all-icmp-drop", `drops all ICMP, ICMP "fragmentation needed" (type 3 code 4) and ICMPv6 "packet too big" (type 2) included`, "6 packets",
			`nft 'insert rule inet filter forward position 3 icmp type destination-unreachable icmp code frag-needed accept comment "wgperf pmtud"'`},
		{"nft-ip6-input-ptb-drop", `rule ip6 filter6 input handle 3 drops ICMPv6 "packet too big" (type 2)`, "3 packets",
			`nft 'insert rule ip6 filter6 input position 3 icmpv6 type packet-too-big accept comment "wgperf pmtud"'`},
		{"nft-jump-icmp-chain", "rule inet filter icmp_guard handle 4 drops ICMP", "3 packets",
			`nft 'insert rule inet filter icmp_guard position 4 icmp type destination-unreachable icmp code frag-needed accept comment "wgperf pmtud"'`},
		{"ipt-output-fragneeded-drop", `rule ip filter OUTPUT rule 1 drops ICMP "fragmentation needed"`, "3 packets",
			"iptables -t filter -I OUTPUT 1 -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT"},
		{"ipt-input-all-icmp-drop", "rule ip filter INPUT rule 1 drops all ICMP", "3 packets",
			"iptables -t filter -I INPUT 1 -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT"},
		{"ip6t-forward-ptb-drop", `rule ip6 filter FORWARD rule 1 drops ICMPv6 "packet too big"`, "3 packets",
			"ip6tables -t filter -I FORWARD 1 -p ipv6-icmp -m icmp6 --icmpv6-type packet-too-big -m comment --comment 'wgperf pmtud' -j ACCEPT"},
		{"ipt-user-chain", "rule ip filter icmp_guard rule 1 drops ICMP", "3 packets",
			"iptables -t filter -I icmp_guard 1 -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT"},
	}
	for _, tc := range tests {
		runCases(t, &icmpFragNeededDropped, []checkCase{{name: tc.form, snap: ptbHost(t, tc.form), want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if !strings.Contains(f.Title, tc.title) {
					t.Errorf("title %q\nwant it to contain %q", f.Title, tc.title)
				}
				var counter string
				for _, e := range f.Evidence {
					if e.Key == "rule counter" {
						counter = e.Value
					}
				}
				if counter != tc.counter {
					t.Errorf("counter %q, want %q", counter, tc.counter)
				}
				if len(f.Fixes) != 1 || f.Fixes[0].Action == nil || f.Fixes[0].Action.Kind != remedy.KindPMTUDAllow {
					t.Fatalf("want one %s fix, got %+v", remedy.KindPMTUDAllow, f.Fixes)
				}
				if got := f.Fixes[0].Commands[0]; got != tc.fix {
					t.Errorf("fix\n got %s\nwant %s", got, tc.fix)
				}
			}}})
	}
}

// Rules that leave PMTUD's errors alone stay quiet: an accept of related
// packets first, drops of echo requests only, a rate limit's excess (which
// icmp.ratelimit-drops reports), drops restricted by conntrack state.
func TestICMPFragNeededDroppedQuiet(t *testing.T) {
	host := func(form string, change func(fw *facts.Firewall)) *facts.Snapshot {
		s := ptbHost(t, form)
		change(&s.Firewall)
		return s
	}
	runCases(t, &icmpFragNeededDropped, []checkCase{
		{name: "nft: ct state related accepted first", snap: ptbHost(t, "nft-related-first")},
		{name: "iptables: --ctstate RELATED accepted first", snap: ptbHost(t, "ipt-related-first")},
		{name: "echo requests only", snap: ptbHost(t, "nft-echo-only-drop")},
		{name: "another ICMP code", snap: host("nft-input-fragneeded-drop", func(fw *facts.Firewall) {
			fw.Rules[0].Text = strings.Replace(fw.Rules[0].Text, "frag-needed", "port-unreachable", 1)
		})},
		{name: "another ICMPv6 type", snap: host("ip6t-forward-ptb-drop", func(fw *facts.Firewall) {
			fw.Rules[0].Text = strings.Replace(fw.Rules[0].Text, "--icmpv6-type 2", "--icmpv6-type 128", 1)
		})},
		{name: "a negated match", snap: host("nft-output-unreachable-drop", func(fw *facts.Firewall) {
			fw.Rules[0].Text = strings.Replace(fw.Rules[0].Text, "type destination", "type != destination", 1)
		})},
		{name: "invalid state only", snap: host("ipt-input-all-icmp-drop", func(fw *facts.Firewall) {
			fw.Rules[0].Text = "-A INPUT -p icmp -m conntrack --ctstate INVALID -j DROP"
		})},
		{name: "a chain no hook reaches", snap: host("nft-jump-icmp-chain", func(fw *facts.Firewall) {
			for i := range fw.Rules {
				if strings.HasPrefix(fw.Rules[i].Verdict, "jump") {
					fw.Rules[i].Verdict = "accept"
				}
			}
		})},
		{name: "accepts", snap: host("nft-output-unreachable-drop", func(fw *facts.Firewall) {
			fw.Rules[0].Verdict = "accept"
		})},
		{name: "the excess of an ICMP rate limit", snap: icmpFormHost(t, "ipt-limit-accept-drop")},
		{name: "a rate limit that drops what is over it", snap: icmpFormHost(t, "banip-over")},
		{name: "no firewall rules", snap: &facts.Snapshot{Host: targettest.Spec("netns:x"), Firewall: facts.Firewall{Nftables: true}}},
		{name: "firewall not collected", snap: &facts.Snapshot{Host: targettest.Spec("netns:x"), Notes: []facts.Note{{Source: "nft", Message: "nft not installed"}}}, skip: true},
	})
}
