package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// TestConntrackInvalidDrops runs on snapshots of a lab host that drops what
// conntrack marks invalid (nft, and iptables) and does not pick connections
// up (nf_conntrack_tcp_loose 0): its table was flushed in the middle of a
// transfer through the tunnel, which then stalled (testdata/collect/conntrack/record-invalid.sh).
func TestConntrackInvalidDrops(t *testing.T) {
	nft, ipt := loadSnapshot(t, "lab-ctinvalid-nft-b.json"), loadSnapshot(t, "lab-ctinvalid-ipt-b.json")
	fixes := func(keys ...string) func(t *testing.T, fs []finding.Finding) {
		return func(t *testing.T, fs []finding.Finding) {
			var got []string
			for _, x := range fs[0].Fixes {
				if x.Action != nil && x.Action.Kind == remedy.KindSysctl && x.Action.Params["value"] == "1" {
					got = append(got, x.Action.Params["key"])
				}
			}
			if strings.Join(got, " ") != strings.Join(keys, " ") {
				t.Errorf("fixes set %v, want %v", got, keys)
			}
		}
	}
	all := []string{"net.netfilter.nf_conntrack_tcp_loose", "net.netfilter.nf_conntrack_tcp_be_liberal", "net.netfilter.nf_conntrack_tcp_ignore_invalid_rst"}
	set := func(kv ...string) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) {
			for i := 0; i+1 < len(kv); i += 2 {
				s.Sysctls[kv[i]] = kv[i+1]
			}
		}
	}
	runCases(t, &conntrackInvalidDrops, []checkCase{
		{name: "nft ct state invalid drop counted 16", snap: nft, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Title != "Rule inet filter input handle 3 dropped 16 packets conntrack marked invalid" {
				t.Errorf("title %q", fs[0].Title)
			}
			fixes(all...)(t, fs)
		}},
		{name: "iptables --ctstate INVALID -j DROP counted 17", snap: ipt, want: sev(warning), assert: fixes(all...)},
		{name: "loose already 1: be liberal", snap: with(t, nft, set("net.netfilter.nf_conntrack_tcp_loose", "1")), want: sev(warning),
			assert: fixes(all[1:]...)},
		{name: "everything lenient already: find which connections", snap: with(t, nft, set(all[0], "1", all[1], "1", all[2], "1")),
			want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
				if len(fs[0].Fixes) != 1 || fs[0].Fixes[0].Action != nil || !strings.Contains(fs[0].Fixes[0].Commands[0], "nf_conntrack_log_invalid") {
					t.Errorf("fixes %+v", fs[0].Fixes)
				}
			}},
		{name: "a rule without a counter, conntrack counted invalid packets", snap: with(t, nft, func(s *facts.Snapshot) {
			for i := range s.Firewall.Rules {
				s.Firewall.Rules[i].HasCounter, s.Firewall.Rules[i].Packets = false, 0
			}
		}), want: sev(info)},
		{name: "the rule dropped nothing", snap: with(t, nft, func(s *facts.Snapshot) {
			for i := range s.Firewall.Rules {
				s.Firewall.Rules[i].Packets = 0
			}
		})},
		{name: "invalid packets counted, but no rule drops them", snap: with(t, ipt, func(s *facts.Snapshot) {
			var keep []facts.FirewallRule
			for _, r := range s.Firewall.Rules {
				if !strings.Contains(r.Text, "INVALID") {
					keep = append(keep, r)
				}
			}
			s.Firewall.Rules = keep
		})},
		{name: "conntrack not loaded", snap: with(t, nft, func(s *facts.Snapshot) { s.Conntrack = nil })},
		{name: "firewall not collected", snap: with(t, nft, func(s *facts.Snapshot) {
			s.Firewall = facts.Firewall{}
			s.Notes = append(s.Notes, facts.Note{Source: "nft", Message: "nft not installed"})
		}), skip: true},
	})
}
