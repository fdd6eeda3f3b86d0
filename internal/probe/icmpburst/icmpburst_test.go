package icmpburst

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "icmpburst", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func load(t *testing.T, name string) facts.Firewall {
	fw, err := parse.ParseNftFirewall(open(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

// loadIptables reads a recorded nft -j and iptables-save -c pair as collect.ReadFirewall does.
func loadIptables(t *testing.T, name string) facts.Firewall {
	nft, err := parse.ParseNftFirewall(open(t, name+".nft.json"))
	if err != nil {
		t.Fatal(err)
	}
	rules, chains, nf, err := parse.ParseIptablesSave(open(t, name+".iptables-save.txt"), "ip")
	if err != nil {
		t.Fatal(err)
	}
	return collect.MergeFirewall(&nft, collect.IptablesView{Rules: rules, Chains: chains, NfBackend: nf})
}

// Recorded in wgicmp- namespaces: 40 pings at 5 ms against an "accept up to
// 10/second" limit, once with iptables and a DROP policy, once with nft and a
// counted drop rule after it. The counter that grew is the policy's or the
// drop rule's, and the fix raises the accept rule's limit.
func TestGrownAcceptUnderLimit(t *testing.T) {
	for _, tc := range []struct {
		name, grew, fix string
		before, after   facts.Firewall
	}{
		{"iptables, DROP policy", "ip filter INPUT policy DROP (drops what ip filter INPUT rule 2: -A INPUT -p icmp -m limit --limit 10/sec -j ACCEPT does not accept)",
			"iptables -t filter -R INPUT 2 -p icmp -m limit --limit 250/sec --limit-burst 25 -j ACCEPT",
			loadIptables(t, "ipt-limit-accept-policy-before"), loadIptables(t, "ipt-limit-accept-policy-after")},
		{"nft, counted drop rule", "inet filter input handle 3 (drops what inet filter input handle 2: limit rate 10/second burst 5 packets does not accept)",
			"nft -a list chain inet filter input",
			load(t, "nft-accept-then-drop-before.nft.json"), load(t, "nft-accept-then-drop-after.nft.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grew := Grown(tc.before, tc.after)
			var drops *CounterGrowth
			for i, g := range grew {
				if g.Limit != nil {
					if drops != nil {
						t.Errorf("two counters attributed to a limit: %s, %s", drops, g)
					}
					drops = &grew[i]
				}
			}
			if drops == nil {
				t.Fatalf("grown %v: no counter attributed to the limit", grew)
			}
			if drops.String() != tc.grew || drops.Packets != 32 {
				t.Errorf("grew %q by %d\nwant %q by 32", drops, drops.Packets, tc.grew)
			}
			fs := Findings(&Result{Host: targettest.Spec("netns:wgicmp-a"), OneShot: Mode{Sent: 30, Failed: 6}, Persistent: Mode{Sent: 15}, Grew: grew})
			if len(fs) != 1 || len(fs[0].Fixes) != 2 {
				t.Fatalf("findings %+v: want one with the raise and the search fix", fs)
			}
			if fx := fs[0].Fixes[0]; fx.Commands[0] != tc.fix || fx.Action == nil || fx.Action.Kind != remedy.KindICMPLimit {
				t.Errorf("fix %q %+v, want %q", fx.Commands, fx.Action, tc.fix)
			}
			// Evidence: the two ping modes and the drop counter; the accept
			// rule's growth is what the limit let through, not a drop.
			if ev := fs[0].Evidence; len(ev) != 3 || ev[2].Key != tc.grew {
				t.Errorf("evidence %+v, want the ping modes and %q", ev, tc.grew)
			}
		})
	}
}

// Recorded on a lab whose A has the multi-WAN case's banIP rule (limit rate over 25/second
// burst 5, counter cnt_icmpflood, drop) on its uplink: 15 rounds of one-shot
// pings to R and B, then one persistent ping of 15 to B.
func TestRecordedExperiment(t *testing.T) {
	targets := []string{"198.51.100.1", "203.0.113.2"}
	one := ParseOneShot(open(t, "oneshot.txt"), targets, 15)
	if one.Sent != 30 || one.Failed != 5 {
		t.Errorf("one-shot %+v, want 5 of 30 failed", one)
	}
	sent, recv, err := ParsePingStats(open(t, "persistent.txt"))
	if err != nil || sent != 15 || recv != 15 {
		t.Errorf("persistent: %d/%d %v, want 15/15", recv, sent, err)
	}
	grew := Grown(load(t, "nft-before.json"), load(t, "nft-after.json"))
	var listed int
	for _, g := range grew {
		if strings.HasSuffix(g.Counter, "cnt_icmpflood") {
			listed++
			if g.Rule == nil || g.Rule.Limit == nil {
				t.Errorf("cnt_icmpflood listed without its limit rule: %+v", g)
			}
		}
		if g.Packets == 0 {
			t.Errorf("growth of 0 listed: %+v", g)
		}
	}
	if listed != 1 {
		t.Fatalf("grown %+v: want the named counter cnt_icmpflood once, through its limit rule", grew)
	}
	res := &Result{Host: targettest.Spec("netns:a"), Targets: targets, OneShot: one, Persistent: Mode{Sent: 15, Failed: 0}, Grew: grew}
	fs := Findings(res)
	if len(fs) != 1 || fs[0].ID != "icmp.ratelimit-drops" {
		t.Fatalf("findings %+v", fs)
	}
	var act *finding.Action
	for _, fx := range fs[0].Fixes {
		if fx.Action != nil {
			act = fx.Action
		}
	}
	if act == nil || act.Kind != remedy.KindICMPLimit || act.Params["rate"] != "250" || act.Params["handle"] == "0" {
		t.Errorf("limit fix %+v", act)
	}
}

func TestFindingsNeedADifference(t *testing.T) {
	for _, tt := range []struct {
		one, per Mode
		want     bool
	}{
		{Mode{Sent: 30, Failed: 0}, Mode{Sent: 30}, false},
		{Mode{Sent: 30, Failed: 5}, Mode{Sent: 30, Failed: 5}, false}, // plain loss hits both
		{Mode{Sent: 30, Failed: 1}, Mode{Sent: 30}, false},            // 3%: one lost reply is noise
		{Mode{Sent: 30, Failed: 4}, Mode{Sent: 30}, true},             // multi-WAN case: 4/30 vs 0/50
	} {
		got := len(Findings(&Result{Host: targettest.Spec("h"), OneShot: tt.one, Persistent: tt.per})) == 1
		if got != tt.want {
			t.Errorf("one-shot %d/%d, persistent %d/%d: finding %v, want %v", tt.one.Failed, tt.one.Sent, tt.per.Failed, tt.per.Sent, got, tt.want)
		}
	}
}

// Recorded on a lab with the multi-WAN case's banIP limit (25/second,
// burst 5), a monitoring agent's six pings a second and 20 ms round trips:
// the one-shot loop of 20 rounds to R and B stopped at its fifth failure.
func TestOneShotStopsAtEnoughFailures(t *testing.T) {
	targets := []string{"198.51.100.1", "203.0.113.2"}
	one := ParseOneShot(open(t, "oneshot-enough.txt"), targets, 20)
	if one.Sent != 36 || one.Failed != EnoughFailures || one.PerTarget["198.51.100.1"] != 3 {
		t.Errorf("one-shot %+v, want 5 of 36 failed, 3 of them to 198.51.100.1", one)
	}
	// Five of 36 against a persistent ping that lost one of 40 is the finding.
	if fs := Findings(&Result{Host: targettest.Spec("netns:a"), Targets: targets, OneShot: one, Persistent: Mode{Sent: 40, Failed: 1}}); len(fs) != 1 {
		t.Errorf("findings %+v, want icmp.ratelimit-drops", fs)
	}
	// A "SENT" line cannot claim more pings than the loop has rounds for.
	if m := ParseOneShot(strings.NewReader("FAIL 1 a\nSENT 999\n"), []string{"a"}, 10); m.Sent != 10 || m.Failed != 1 {
		t.Errorf("SENT 999 of 10 rounds: %+v, want 1 of 10", m)
	}
}

func TestOneShotScriptQuotes(t *testing.T) {
	s := OneShotScript([]string{"8.8.8.8", "x;rm -rf /"}, 30, 4)
	if !strings.Contains(s, "-lt 30") || !strings.Contains(s, "-lt 5") || !strings.Contains(s, "-W 4") || !strings.Contains(s, `'x;rm -rf /'`) {
		t.Errorf("script %s", s)
	}
}

// An nft limit whose excess a drop policy or an uncounted reject drops leaves
// no counter growth; the finding names the limit and shows the counter to add
// (recorded rulesets from testdata/collect/icmplimit).
func TestFindingsNameUncountedLimits(t *testing.T) {
	for _, tc := range []struct{ form, evidence, count, raise string }{
		{"nft-accept-policy-drop", "ip filter4 input handle 3: meta l4proto icmp limit rate 10/second accept, excess dropped by the DROP policy of ip filter4 input",
			"nft 'add rule ip filter4 input meta l4proto icmp counter drop'",
			"nft 'replace rule ip filter4 input handle 3 meta l4proto icmp limit rate 250/second burst 25 packets accept'"},
		{"nft-ip6-accept-reject-nocounter", "ip6 filter6 input handle 2: icmpv6 type echo-reply limit rate 10/second accept, excess dropped by ip6 filter6 input handle 3: icmpv6 type echo-reply reject",
			"nft 'replace rule ip6 filter6 input handle 3 icmpv6 type echo-reply counter reject'",
			"nft 'replace rule ip6 filter6 input handle 2 icmpv6 type echo-reply limit rate 250/second burst 25 packets accept'"},
	} {
		t.Run(tc.form, func(t *testing.T) {
			dir := filepath.Join("..", "..", "..", "testdata", "collect", "icmplimit")
			j, err := os.Open(filepath.Join(dir, tc.form+".nft.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			fw, err := parse.ParseNftFirewall(j)
			if err != nil {
				t.Fatal(err)
			}
			txt, err := os.Open(filepath.Join(dir, tc.form+".nft.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer txt.Close()
			texts, err := parse.ParseNftText(txt)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range fw.Rules {
				fw.Rules[i].Text = texts[parse.NftRuleKey(r.Family, r.Table, r.Chain, strconv.Itoa(r.Handle))]
			}
			res := &Result{Host: targettest.Spec("netns:wgicmp-a"), OneShot: Mode{Sent: 30, Failed: 6}, Persistent: Mode{Sent: 15}, Uncounted: UncountedLimits(fw)}
			fs := Findings(res)
			if len(fs) != 1 {
				t.Fatalf("findings %+v", fs)
			}
			f := fs[0]
			if len(f.Evidence) != 3 || f.Evidence[2].Value != tc.evidence {
				t.Errorf("evidence %+v\nwant %q", f.Evidence, tc.evidence)
			}
			var cmds []string
			for _, fx := range f.Fixes {
				cmds = append(cmds, fx.Commands[0])
			}
			if len(cmds) != 3 || cmds[0] != tc.count || cmds[1] != tc.raise {
				t.Errorf("fixes %q\nwant %q, %q, then the search", cmds, tc.count, tc.raise)
			}
		})
	}
}

// TestRecordReportFixture writes what "icmp-burst --json" prints for the
// experiment TestRecordedExperiment reads (one-shot pings to R and B, a
// persistent ping to B, the banIP counter before and after) as
// testdata/report/icmp-burst.json, which the HTML report tests render.
func TestRecordReportFixture(t *testing.T) {
	if !testutil.Update() {
		t.Skip("the fixture is written with -update")
	}
	targets := []string{"198.51.100.1", "203.0.113.2"}
	sent, recv, err := ParsePingStats(open(t, "persistent.txt"))
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Host: targettest.Spec("netns:a"), Targets: targets, OneShot: ParseOneShot(open(t, "oneshot.txt"), targets, 15),
		Persistent: Mode{Sent: sent, Failed: sent - recv, PerTarget: map[string]int{"203.0.113.2": sent - recv}},
		Grew:       Grown(load(t, "nft-before.json"), load(t, "nft-after.json"))}
	res.Findings = Findings(res)
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "..", "testdata", "report", "icmp-burst.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
