package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// icmpFormHost is the recording namespace with one recorded ICMP-limit form
// loaded (testdata/collect/icmplimit), read as the collector reads it; its
// uplink is veth-a.
func icmpFormHost(t *testing.T, form string) *facts.Snapshot {
	t.Helper()
	return icmpFormHostVia(t, form, "veth-a")
}

// icmpFormHostVia is icmpFormHost with its default route on uplink.
func icmpFormHostVia(t *testing.T, form, uplink string) *facts.Snapshot {
	t.Helper()
	return &facts.Snapshot{Host: targettest.Spec("netns:wgicmp-a"), Firewall: recordedFirewall(t, "icmplimit", form),
		Routes: []facts.Route{{Family: "inet", Table: "main", Dst: "default", Dev: uplink}}}
}

// recordedFirewall is one recorded firewall form of testdata/collect/DIR
// (FORM.nft.json, FORM.nft.txt, and FORM.iptables-save.txt and
// FORM.ip6tables-save.txt where iptables wrote it), read as the collector
// reads it.
func recordedFirewall(t *testing.T, dir, form string) facts.Firewall {
	t.Helper()
	dir = filepath.Join("..", "..", "testdata", "collect", dir)
	read := func(name string) (*os.File, bool) {
		f, err := os.Open(filepath.Join(dir, form+name))
		if os.IsNotExist(err) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f, true
	}
	f, _ := read(".nft.json")
	nft, err := parse.ParseNftFirewall(f)
	if err != nil {
		t.Fatal(err)
	}
	f, _ = read(".nft.txt")
	texts, err := parse.ParseNftText(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range nft.Rules {
		nft.Rules[i].Text = texts[parse.NftRuleKey(r.Family, r.Table, r.Chain, fmt.Sprint(r.Handle))]
	}
	var ipt collect.IptablesView
	for _, fam := range []struct{ file, family string }{{".iptables-save.txt", "ip"}, {".ip6tables-save.txt", "ip6"}} {
		if f, ok := read(fam.file); ok {
			rules, chains, nf, err := parse.ParseIptablesSave(f, fam.family)
			if err != nil {
				t.Fatal(err)
			}
			ipt.Rules, ipt.Chains, ipt.NfBackend = append(ipt.Rules, rules...), append(ipt.Chains, chains...), ipt.NfBackend || nf
		}
	}
	return collect.MergeFirewall(&nft, ipt)
}

// TestICMPLimitForms: every recorded form raises icmp.ratelimit-drops,
// names the counter of what drops the limit's excess, and raises the limit
// where it is written (or, with nothing counting, shows the counter to add).
func TestICMPLimitForms(t *testing.T) {
	tests := []struct {
		form    string
		sev     finding.Severity
		title   string // a part of the title
		counter string // "key = value" of the counter evidence
		fix     string // the first fix's first command
		action  bool   // the fix can be applied by wgperf fix
	}{
		{"nft-accept-then-drop", warning, "rule inet filter input handle 3 (icmp type echo-reply counter packets 50 bytes 4200 drop) dropped 50 packets",
			"rule counter = 50 packets",
			"nft 'replace rule inet filter input handle 2 icmp type echo-reply limit rate 250/second burst 25 packets counter packets 10 bytes 840 accept'", true},
		{"nft-accept-policy-drop", info, "the DROP policy of chain input drops the excess and nothing counts it",
			"counter = none", "nft 'add rule ip filter4 input meta l4proto icmp counter drop'", false},
		{"nft-ip6-accept-reject-nocounter", info, "rule ip6 filter6 input handle 3 (icmpv6 type echo-reply reject) drops the excess and nothing counts it",
			"counter = none", "nft 'replace rule ip6 filter6 input handle 3 icmpv6 type echo-reply counter reject'", false},
		{"nft-forward-accept-then-drop", warning, "in inet fwdguard/forward: rule inet fwdguard forward handle 3 (iifname \"veth-ac\" icmp type echo-reply counter packets 50 bytes 4200 drop) dropped 50 packets on veth-ac",
			"rule counter = 50 packets",
			`nft 'replace rule inet fwdguard forward handle 2 iifname "veth-ac" icmp type echo-reply limit rate 250/second burst 25 packets accept'`, true},
		{"nft-dynset-over", warning, "(10/second burst 5 packets per key of icmp_src) in inet flood/prerouting dropped 50 packets",
			"rule counter = 50 packets",
			"nft 'replace rule inet flood prerouting handle 3 icmp type echo-reply update @icmp_src { ip saddr limit rate over 250/second burst 25 packets } counter packets 50 bytes 4200 drop'", true},
		{"nft-meter-over", warning, "(10/second burst 5 packets per key of icmpflood) in ip flood/input dropped 104 packets",
			"rule counter = 104 packets",
			"nft 'delete rule ip flood input handle 3; insert rule ip flood input position 3 ip protocol icmp meter icmpflood size 65535 { ip saddr limit rate over 250/second burst 25 packets } counter packets 104 bytes 8736 drop'", true},
		{"fw4-limit-accept", warning, `in inet fw4/input_wan: rule inet fw4 handle_reject handle 11 (reject comment "!fw4: Reject any other traffic") dropped 20 packets`,
			"counter of inet fw4 reject_from_wan handle 12 = 20 packets",
			`nft 'replace rule inet fw4 input_wan handle 8 icmp type echo-request limit rate 250/second burst 25 packets counter packets 23 bytes 1932 accept comment "!fw4: Allow-Ping"'`, true},
		{"banip-over", warning, "in inet banIP/pre-routing dropped 160 packets on every interface but lo,br-lan",
			"counter cnt_icmpflood = 160 packets",
			`nft 'replace rule inet banIP pre-routing handle 5 iifname != { "lo", "br-lan" } meta nfproto . meta l4proto { ipv4 . icmp, ipv6 . ipv6-icmp } limit rate over 250/second burst 25 packets counter name "cnt_icmpflood" drop'`, true},
		{"ipt-limit-accept-drop", warning, "rule ip filter INPUT rule 2 (-A INPUT -p icmp -m icmp --icmp-type 0 -j DROP) dropped 50 packets",
			"rule counter = 50 packets", "iptables -t filter -R INPUT 1 -p icmp -m icmp --icmp-type 0 -m limit --limit 250/sec --limit-burst 25 -j ACCEPT", true},
		{"ipt-mangle-prerouting-limit-drop", warning, "in ip mangle/PREROUTING: rule ip mangle PREROUTING rule 2 (-A PREROUTING -i veth-a -p icmp -j DROP) dropped 104 packets on veth-a",
			"rule counter = 104 packets", "iptables -t mangle -R PREROUTING 1 -i veth-a -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT", true},
		{"ipt-limit-accept-policy", warning, "in ip filter/INPUT: the DROP policy of chain INPUT dropped 104 packets",
			"policy counter of INPUT = 104 packets", "iptables -t filter -R INPUT 2 -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT", true},
		{"ipt-hashlimit-accept-reject", warning, "rule ip filter INPUT rule 2 (-A INPUT -p icmp -j REJECT --reject-with icmp-host-prohibited) dropped 104 packets",
			"rule counter = 104 packets",
			"iptables -t filter -R INPUT 1 -p icmp -m hashlimit --hashlimit-upto 250/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmp -j ACCEPT", true},
		{"ipt-hashlimit-above-drop", warning, "in ip filter/INPUT dropped 104 packets", "rule counter = 104 packets",
			"iptables -t filter -R INPUT 1 -p icmp -m hashlimit --hashlimit-above 250/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmpflood -j DROP", true},
		{"ip6t-limit-accept-drop", warning, "rule ip6 filter INPUT rule 2 (-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 129 -j DROP) dropped 50 packets",
			"rule counter = 50 packets",
			"ip6tables -t filter -R INPUT 1 -p ipv6-icmp -m icmp6 --icmpv6-type 129 -m limit --limit 250/sec --limit-burst 25 -j ACCEPT", true},
	}
	for _, tc := range tests {
		uplink := "veth-a"
		if strings.Contains(tc.form, "forward") {
			uplink = "veth-ac" // A forwards to C through veth-ac, its way out
		}
		runCases(t, &icmpRateLimitDrops, []checkCase{{name: tc.form, snap: icmpFormHostVia(t, tc.form, uplink), want: sev(tc.sev),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if !strings.Contains(f.Title, tc.title) {
					t.Errorf("title %q\nwant it to contain %q", f.Title, tc.title)
				}
				var counters []string
				for _, e := range f.Evidence {
					if e.Threshold != "" {
						counters = append(counters, e.Key+" = "+e.Value)
					}
				}
				if len(counters) != 1 || counters[0] != tc.counter {
					t.Errorf("counter evidence %q, want %q", counters, tc.counter)
				}
				if len(f.Fixes) == 0 || len(f.Fixes[0].Commands) == 0 {
					t.Fatalf("no fix")
				}
				if got := f.Fixes[0].Commands[0]; got != tc.fix {
					t.Errorf("fix\n got %s\nwant %s", got, tc.fix)
				}
				if got := f.Fixes[0].Action != nil && f.Fixes[0].Action.Kind == remedy.KindICMPLimit; got != tc.action {
					t.Errorf("applicable fix %v, want %v", got, tc.action)
				}
			}}})
	}
}

// The limit's excess only counts as a drop when it really is dropped.
func TestICMPLimitFormsNotDropped(t *testing.T) {
	host := func(form string, change func(fw *facts.Firewall)) *facts.Snapshot {
		s := icmpFormHost(t, form)
		change(&s.Firewall)
		return s
	}
	runCases(t, &icmpRateLimitDrops, []checkCase{
		{name: "accept, then an accept of all ICMP: nothing dropped", snap: host("nft-accept-then-drop", func(fw *facts.Firewall) {
			fw.Rules[1].Verdict = "accept"
		})},
		{name: "accept with a policy that accepts", snap: host("ipt-limit-accept-policy", func(fw *facts.Firewall) {
			fw.Chains[0].Policy = "accept"
		})},
		{name: "the drop after the limit is for TCP", snap: host("ipt-hashlimit-accept-reject", func(fw *facts.Firewall) {
			fw.Rules[1].Protocol = "tcp"
		})},
		{name: "the drop after an ICMP limit is for ICMPv6 only", snap: host("nft-accept-then-drop", func(fw *facts.Firewall) {
			fw.Rules[1].Protocol = "icmpv6"
		})},
		{name: "the drop after the limit is on another interface", snap: host("ipt-limit-accept-drop", func(fw *facts.Firewall) {
			fw.Rules[0].IIf, fw.Rules[1].IIf = "veth-a", "lan0"
		})},
		{name: "counted drops at zero", snap: host("ipt-limit-accept-policy", func(fw *facts.Firewall) {
			fw.Chains[0].Packets = 0
		})},
		{name: "forwarded replies from a LAN interface are not an uplink's", snap: icmpFormHost(t, "nft-forward-accept-then-drop")},
		{name: "limit on a LAN interface is not an uplink's", snap: host("banip-over", func(fw *facts.Firewall) {
			fw.Rules[0].IIf = "br-lan"
		})},
		{name: "fw4 with a zone that accepts the rest", snap: host("fw4-limit-accept", func(fw *facts.Firewall) {
			for i := range fw.Rules {
				if fw.Rules[i].Verdict == "jump reject_from_wan" {
					fw.Rules[i].Verdict = "accept"
				}
			}
		})},
	})
}
