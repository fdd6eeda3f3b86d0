package remedy

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func TestIptablesLimit(t *testing.T) {
	m := must(t)
	limit := IptablesRule{Family: "ip", Table: "filter", Chain: "INPUT", Position: 2,
		Text: "-A INPUT -p icmp -m limit --limit 10/sec -j ACCEPT"}
	for _, tc := range []struct {
		name   string
		r      Remedy
		cmds   []string
		config []finding.ConfigSnippet
	}{
		{"limit, then a DROP policy", m(IptablesLimit(limit, 250)),
			[]string{"iptables -t filter -R INPUT 2 -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT"},
			[]finding.ConfigSnippet{{Path: "/etc/iptables/rules.v4 (*filter), or wherever your firewall script adds the rule",
				Lines: []string{"-A INPUT -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT"}}}},
		{"hashlimit upto, with a quoted comment", m(IptablesLimit(IptablesRule{Family: "ip6", Table: "filter", Chain: "INPUT", Position: 1,
			Text: `-A INPUT -p ipv6-icmp -m comment --comment "rate limit ping" -m hashlimit --hashlimit-upto 10/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmp -j ACCEPT`}, 250)),
			[]string{"ip6tables -t filter -R INPUT 1 -p ipv6-icmp -m comment --comment 'rate limit ping' -m hashlimit --hashlimit-upto 250/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmp -j ACCEPT"},
			[]finding.ConfigSnippet{{Path: "/etc/iptables/rules.v6 (*filter), or wherever your firewall script adds the rule",
				Lines: []string{"-A INPUT -p ipv6-icmp -m comment --comment 'rate limit ping' -m hashlimit --hashlimit-upto 250/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmp -j ACCEPT"}}}},
	} {
		if d := cmp.Diff(tc.cmds, tc.r.Commands()); d != "" {
			t.Errorf("%s: commands (-want +got)\n%s", tc.name, d)
		}
		if d := cmp.Diff(tc.config, tc.r.Config()); d != "" {
			t.Errorf("%s: config (-want +got)\n%s", tc.name, d)
		}
		p, err := Parse(finding.Action{Kind: tc.r.Kind(), Params: tc.r.Params()})
		if err != nil || p.Describe() != tc.r.Describe() {
			t.Errorf("%s: does not round-trip: %v", tc.name, err)
		}
	}

	for name, r := range map[string]IptablesRule{
		"no limit to raise":         {Family: "ip", Table: "filter", Chain: "INPUT", Position: 1, Text: "-A INPUT -p icmp -j DROP"},
		"another chain's rule":      {Family: "ip", Table: "filter", Chain: "FORWARD", Position: 1, Text: limit.Text},
		"family bridge":             {Family: "bridge", Table: "filter", Chain: "INPUT", Position: 1, Text: limit.Text},
		"no position":               {Family: "ip", Table: "filter", Chain: "INPUT", Text: limit.Text},
		"unterminated quote":        {Family: "ip", Table: "filter", Chain: "INPUT", Position: 1, Text: `-A INPUT -m comment --comment "x -m limit --limit 1/sec`},
		"table with shell in it":    {Family: "ip", Table: "filter;reboot", Chain: "INPUT", Position: 1, Text: limit.Text},
		"rule with a newline in it": {Family: "ip", Table: "filter", Chain: "INPUT", Position: 1, Text: limit.Text + "\nreboot"},
	} {
		if _, err := IptablesLimit(r, 250); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The plan finds the rule again by its text in the recorded iptables-save and
// replaces it at that position, with the old rule as its undo.
func TestIptablesLimitPlan(t *testing.T) {
	save, err := os.ReadFile("../../testdata/collect/icmplimit/ipt-limit-accept-drop.iptables-save.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := must(t)(IptablesLimit(IptablesRule{Family: "ip", Table: "filter", Chain: "INPUT", Position: 7,
		Text: "-A INPUT -p icmp -m icmp --icmp-type 0 -m limit --limit 10/sec -j ACCEPT"}, 250))
	// The host answers iptables-save and nothing else: the plan only reads.
	h := targettest.New("netns:wgicmp-a")
	h.On("iptables-save -t filter", string(save))
	st, err := r.Plan(context.Background(), &Env{T: h, Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	want := Step{Kind: KindICMPLimit, Summary: "ICMP limit 10/sec -> 250/sec (iptables -t filter, rule 1 of INPUT)",
		Notes:    st.Notes,
		Commands: []string{"iptables -t filter -R INPUT 1 -p icmp -m icmp --icmp-type 0 -m limit --limit 250/sec --limit-burst 25 -j ACCEPT"},
		Undo:     []string{"iptables -t filter -R INPUT 1 -p icmp -m icmp --icmp-type 0 -m limit --limit 10/sec -j ACCEPT"}}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("step (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"iptables-save -t filter"}, h.Ran()); d != "" {
		t.Errorf("calls (-want +got)\n%s", d)
	}
	gone := must(t)(IptablesLimit(IptablesRule{Family: "ip", Table: "filter", Chain: "INPUT", Position: 1,
		Text: "-A INPUT -p icmp -m limit --limit 99/sec -j ACCEPT"}, 250))
	if _, err := gone.Plan(context.Background(), &Env{T: h, Root: "/"}); err == nil || !strings.Contains(err.Error(), "no rule") {
		t.Errorf("a rule that is gone: %v", err)
	}
}

func TestNftCountDrops(t *testing.T) {
	for _, tc := range []struct {
		name string
		fix  func() (finding.Fix, error)
		want string // "" = refused
	}{
		{"reject after the limit", func() (finding.Fix, error) {
			return NftCountRule("count", NftRule{"ip6", "filter6", "input", 3, "icmpv6 type echo-reply reject"})
		}, "nft 'replace rule ip6 filter6 input handle 3 icmpv6 type echo-reply counter reject'"},
		{"fw4's reject with a comment", func() (finding.Fix, error) {
			return NftCountRule("count", NftRule{"inet", "fw4", "handle_reject", 11, `reject comment "!fw4: Reject any other traffic"`})
		}, `nft 'replace rule inet fw4 handle_reject handle 11 counter reject comment "!fw4: Reject any other traffic"'`},
		{"reject with an icmp type", func() (finding.Fix, error) {
			return NftCountRule("count", NftRule{"inet", "f", "input", 4, "icmp type echo-request reject with icmp port-unreachable"})
		}, "nft 'replace rule inet f input handle 4 icmp type echo-request counter reject with icmp port-unreachable'"},
		{"already counted", func() (finding.Fix, error) {
			return NftCountRule("count", NftRule{"inet", "f", "input", 4, "icmp type echo-reply counter drop"})
		}, ""},
		{"no verdict", func() (finding.Fix, error) {
			return NftCountRule("count", NftRule{"inet", "f", "input", 4, "icmp type echo-reply"})
		}, ""},
		{"two commands", func() (finding.Fix, error) {
			return NftCountRule("count", NftRule{"inet", "f", "input", 4, "drop; flush ruleset"})
		}, ""},
		{"policy drop", func() (finding.Fix, error) { return NftCountPolicy("count", "ip", "filter4", "input", "icmp") },
			"nft 'add rule ip filter4 input meta l4proto icmp counter drop'"},
		{"policy drop, v6", func() (finding.Fix, error) { return NftCountPolicy("count", "inet", "fw4", "input", "icmpv6") },
			"nft 'add rule inet fw4 input meta l4proto ipv6-icmp counter drop'"},
		{"policy drop, tcp", func() (finding.Fix, error) { return NftCountPolicy("count", "inet", "fw4", "input", "tcp") }, ""},
	} {
		fix, err := tc.fix()
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: accepted: %v", tc.name, fix.Commands)
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (len(fix.Commands) != 1 || fix.Commands[0] != tc.want || fix.Action != nil):
			t.Errorf("%s:\n got %q\nwant %s", tc.name, fix.Commands, tc.want)
		}
	}
}

// TestIptablesLimitRaisesBurst: a limit match's burst grows to a tenth of a
// second's worth with its rate (at the default 5 a monitoring agent's six
// pings at once still lose one), a larger one stays, a hashlimit has none.
func TestIptablesLimitRaisesBurst(t *testing.T) {
	for text, want := range map[string]string{
		"-A INPUT -p icmp -m limit --limit 25/sec -j ACCEPT":                                 "iptables -t filter -R INPUT 1 -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT",
		"-A INPUT -p icmp -m limit --limit 25/sec --limit-burst 10 -j ACCEPT":                "iptables -t filter -R INPUT 1 -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT",
		"-A INPUT -p icmp -m limit --limit 25/sec --limit-burst 100 -j ACCEPT":               "iptables -t filter -R INPUT 1 -p icmp -m limit --limit 250/sec --limit-burst 100 -j ACCEPT",
		"-A INPUT -p icmp -m hashlimit --hashlimit-upto 25/sec --hashlimit-name x -j ACCEPT": "iptables -t filter -R INPUT 1 -p icmp -m hashlimit --hashlimit-upto 250/sec --hashlimit-name x -j ACCEPT",
	} {
		r, err := IptablesLimit(IptablesRule{Family: "ip", Table: "filter", Chain: "INPUT", Position: 1, Text: text}, 250)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := r.Commands(); len(got) != 1 || got[0] != want {
			t.Errorf("%s:\n got %q\nwant %q", text, got, want)
		}
	}
}

// The nft plan reads the rule by handle (recorded: the lab's banIP-style
// limit, "nft -a list chain" on kernel 6.1) and raises its rate and its
// burst: nft's bucket holds 5 packets at any rate, so at 250/s a monitoring
// agent's six echo requests at once still lost a reply a second (measured
// in the lab; none with burst 20). A rule already raised is done; one whose
// rate alone was raised is raised again, for its burst.
func TestNftLimitPlanRaisesTheBurst(t *testing.T) {
	listing, err := os.ReadFile("../../testdata/collect/icmplimit/banip-prerouting.nft-a.txt")
	if err != nil {
		t.Fatal(err)
	}
	old := `iifname "eth0" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 25/second counter name "cnt_icmpflood" drop`
	raised := `iifname "eth0" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 250/second burst 25 packets counter name "cnt_icmpflood" drop`
	r := must(t)(NftReplaceRule(NftRule{Family: "inet", Table: "banIP", Chain: "pre-routing", Handle: 4, Text: old}, 250))
	plan := func(listing string) Step { return planOnChain(t, r, "inet banIP pre-routing", listing) }
	replace := func(rule string) string {
		return "nft 'replace rule inet banIP pre-routing handle 4 " + rule + "'"
	}
	st := plan(string(listing))
	want := Step{Kind: KindICMPLimit, Summary: "ICMP limit 25/s -> 250/s, burst 25 (inet banIP pre-routing handle 4)",
		Notes: st.Notes, Commands: []string{replace(raised)}, Undo: []string{replace(old)}}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("step (-want +got)\n%s", d)
	}
	if st := plan(strings.Replace(string(listing), old, raised, 1)); !st.Done {
		t.Errorf("a rule already raised: %+v", st)
	}
	rateOnly := strings.Replace(raised, " burst 25 packets", "", 1)
	if st := plan(strings.Replace(string(listing), old, rateOnly, 1)); st.Done || len(st.Commands) != 1 || st.Commands[0] != replace(raised) {
		t.Errorf("a rule whose rate alone was raised: %+v", st)
	}
	// A burst larger than a tenth of a second's worth is kept.
	if got := RaiseLimit("limit rate 10/minute burst 100 packets accept", 250); got != "limit rate 250/second burst 100 packets accept" {
		t.Errorf("RaiseLimit kept the burst as %q", got)
	}
}

// A rule that declares a meter cannot be replaced in place (the kernel says
// "Operation not supported"): the plan deletes it and inserts the raised rule
// at its position in one transaction, and its undo finds the raised rule by
// its meter, as the new handle is not known before. A second plan finds the
// raised rule by its meter too (recorded: "nft -a list ruleset", kernel 6.18).
func TestNftMeterLimitPlanReinserts(t *testing.T) {
	listing, err := os.ReadFile("../../testdata/collect/icmplimit/nft-meter-over.nft.txt")
	if err != nil {
		t.Fatal(err)
	}
	old := "ip protocol icmp meter icmpflood size 65535 { ip saddr limit rate over 10/second } counter packets 104 bytes 8736 drop"
	raised := "ip protocol icmp meter icmpflood size 65535 { ip saddr limit rate over 250/second burst 25 packets } counter packets 104 bytes 8736 drop"
	r := must(t)(NftReplaceRule(NftRule{Family: "ip", Table: "flood", Chain: "input", Handle: 3, Text: old}, 250))
	if got := r.Params()["meter"]; got != "icmpflood" {
		t.Errorf("params: meter %q, want icmpflood", got)
	}
	plan := func(listing string) Step { return planOnChain(t, r, "ip flood input", listing) }
	st := plan(string(listing))
	want := Step{Kind: KindICMPLimit, Summary: "ICMP limit 10/s -> 250/s, burst 25 (ip flood input handle 3)", Notes: st.Notes,
		Commands: []string{"nft 'delete rule ip flood input handle 3; insert rule ip flood input position 3 " + raised + "'"},
		Undo: []string{`h=$(nft -a list chain ip flood input | sed -n 's/.* meter icmpflood .*# handle \([0-9][0-9]*\)$/\1/p') && [ -n "$h" ] && ` +
			`nft "delete rule ip flood input handle $h; insert rule ip flood input position $h "'` + old + "'"}}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("step (-want +got)\n%s", d)
	}
	reinserted := strings.Replace(strings.Replace(string(listing), old, raised, 1), "drop # handle 3", "drop # handle 9", 1)
	if st := plan(reinserted); !st.Done || !strings.Contains(st.Summary, "handle 9") {
		t.Errorf("the raised rule under its new handle: %+v", st)
	}
	if got := must(t)(NftReplaceRule(NftRule{Family: "ip", Table: "flood", Chain: "input", Handle: 3, Text: old}, 250)).Commands(); len(got) == 0 ||
		!strings.HasPrefix(got[0], "nft 'delete rule ip flood input handle 3; insert rule ip flood input position 3 ") {
		t.Errorf("shown fix: %q", got)
	}
}

// planOnChain plans r on a host whose "nft -a list chain CHAIN" prints listing.
func planOnChain(t *testing.T, r Remedy, chain, listing string) Step {
	t.Helper()
	h := targettest.New("netns:wgicmp-a")
	h.On("nft -a list chain "+chain, listing)
	st, err := r.Plan(context.Background(), &Env{T: h, Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestNftLimitPlanRechecksTheRule is issue 41's hole 8: between the finding
// and the plan a firewall reload can put another rule at the handle; the
// plan raises a rule only if it still limits ICMP, never an ssh
// brute-force meter or any other limit that took the handle.
func TestNftLimitPlanRechecksTheRule(t *testing.T) {
	r := must(t)(NftReplaceRule(NftRule{Family: "inet", Table: "banIP", Chain: "pre-routing", Handle: 4,
		Text: `iifname "eth0" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 25/second counter name "cnt_icmpflood" drop`}, 250))
	for _, rule := range []string{
		`tcp dport 22 ct state new meter sshflood { ip saddr limit rate over 3/minute } counter packets 9 bytes 540 drop`,
		`limit rate over 10 mbytes/second counter packets 0 bytes 0 drop`,
		`udp dport 53 limit rate over 50/second drop`,
		`ip protocol != icmp limit rate over 25/second drop`,
		`meta l4proto { tcp, udp } limit rate over 25/second drop`,
		`iifname "icmp0" limit rate over 25/second drop`,
		`tcp dport 22 limit rate over 3/minute comment "no meta l4proto icmp here, nor icmp type x" drop`,
	} {
		listing := "table inet banIP {\n\tchain pre-routing {\n\t\t" + rule + " # handle 4\n\t}\n}\n"
		h := targettest.New("netns:wgicmp-a")
		h.On("nft -a list chain inet banIP pre-routing", listing)
		st, err := r.Plan(context.Background(), &Env{T: h, Root: "/"})
		if err == nil || !strings.Contains(err.Error(), "not an ICMP rate limit") {
			t.Errorf("rule %q at the handle: %+v, %v; want a refusal", rule, st, err)
		}
	}
	for _, rule := range []string{
		`meta l4proto icmp limit rate 10/second accept`,
		`meta l4proto { icmp, ipv6-icmp } limit rate over 25/second drop`,
		`ip6 nexthdr icmpv6 limit rate 10/second accept`,
		`icmp type echo-reply limit rate 10/second counter packets 10 bytes 840 accept`,
		`meta l4proto ipv6-icmp limit rate 10/minute counter packets 0 bytes 0 accept`,
	} {
		listing := "table inet banIP {\n\tchain pre-routing {\n\t\t" + rule + " # handle 4\n\t}\n}\n"
		if st := planOnChain(t, r, "inet banIP pre-routing", listing); len(st.Commands) != 1 {
			t.Errorf("ICMP rule %q: %+v, want it raised", rule, st)
		}
	}
}
