package collect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// ReadFirewall reads nft's ruleset (with each rule's text) and, where iptables
// is installed, the counters iptables-save prints (rule positions and chain
// policy counters, which nft does not show), joined as Collect joins them.
// Probes read it before and after a test to see which counters grew. It
// returns nil when neither tool answered; the note says why parts are missing.
// A missing tool is no error: counters are evidence, not a reason to abort.
func ReadFirewall(ctx context.Context, t target.Target) (*facts.Firewall, string) {
	return readFirewall(ctx, t, true)
}

// ReadFirewallCounters is ReadFirewall without the rules' texts ("nft -a list
// ruleset"): a read that is only compared with a later one needs its counters
// alone, as firewall.FirewallGrown matches rules by firewall.RuleKey and names them from the
// later read. One command fewer on the target, per read.
func ReadFirewallCounters(ctx context.Context, t target.Target) (*facts.Firewall, string) {
	return readFirewall(ctx, t, false)
}

func readFirewall(ctx context.Context, t target.Target, texts bool) (*facts.Firewall, string) {
	return firewallFrom(func(key string) ([]byte, error) {
		argv := firewallArgv[key]
		return t.Run(ctx, argv[0], argv[1:]...)
	}, texts)
}

// firewallArgv are the commands behind the firewall's outputs, by key.
var firewallArgv = map[string][]string{
	"nft-json":  {"nft", "-j", "list", "ruleset"},
	"nft-text":  {"nft", "-a", "list", "ruleset"},
	"iptables":  {"iptables-save", "-c"},
	"ip6tables": {"ip6tables-save", "-c"},
}

// firewallFrom joins the firewall's outputs, which output(key) gives (an
// error satisfying target.IsNotFound for a tool that is not installed):
// nft's ruleset, with texts its rules' text, and iptables-save's counters.
func firewallFrom(output func(key string) ([]byte, error), texts bool) (*facts.Firewall, string) {
	nft, note := nftFrom(output, texts)
	var ipt IptablesView
	for _, fam := range []struct{ key, family string }{{"iptables", "ip"}, {"ip6tables", "ip6"}} {
		out, err := output(fam.key)
		if err != nil {
			continue // not installed, or no iptables: nft's view is all there is
		}
		rules, chains, nf, err := parse.ParseIptablesSave(bytes.NewReader(out), fam.family)
		if err != nil {
			note += fmt.Sprintf("%s unreadable: %v. ", firewallArgv[fam.key][0], err)
			continue
		}
		ipt.Rules, ipt.Chains, ipt.NfBackend = append(ipt.Rules, rules...), append(ipt.Chains, chains...), ipt.NfBackend || nf
	}
	if nft == nil && len(ipt.Rules) == 0 {
		return nil, note + "no firewall counters. "
	}
	fw := MergeFirewall(nft, ipt)
	return &fw, note
}

// nftFrom reads "nft -j list ruleset" and, with texts, fills the rules' text
// from "nft -a list ruleset", which findings quote; without it they show
// where to look.
func nftFrom(output func(key string) ([]byte, error), texts bool) (*facts.Firewall, string) {
	out, err := output("nft-json")
	switch {
	case target.IsNotFound(err):
		return nil, "nft not installed. "
	case err != nil:
		return nil, fmt.Sprintf("nft -j list ruleset failed: %v. ", err)
	}
	fw, err := parse.ParseNftFirewall(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Sprintf("nft ruleset unreadable: %v. ", err)
	}
	if !texts {
		return &fw, ""
	}
	if out, err := output("nft-text"); err == nil {
		_ = withNftTexts(&fw, bytes.NewReader(out)) // the rules stand without their text
	}
	return &fw, ""
}

// withNftTexts fills the rules' Text from "nft -a list ruleset" output.
func withNftTexts(fw *facts.Firewall, r io.Reader) error {
	texts, err := parse.ParseNftText(r)
	for i, rule := range fw.Rules {
		fw.Rules[i].Text = texts[parse.NftRuleKey(rule.Family, rule.Table, rule.Chain, strconv.Itoa(rule.Handle))]
	}
	return err
}

// firewallSource is the firewall: nft's ruleset (with each rule's text) and
// what iptables-save and ip6tables-save print, joined (MergeFirewall).
var firewallSource = source{
	batch: firewallBatch,
	cmds: []shellCmd{
		{"nft-json", ifInstalled("nft", "nft -j list ruleset")},
		{"nft-text", ifInstalled("nft", "nft -a list ruleset")},
		{"iptables", ifInstalled("iptables-save", "iptables-save -c")},
		{"ip6tables", ifInstalled("ip6tables-save", "ip6tables-save -c")},
	},
	assemble: (*collector).firewall,
}

func (c *collector) firewall(map[string]*fileRead) {
	var ipt IptablesView
	for _, fam := range []struct{ key, family, source string }{{"iptables", "ip", "iptables-save"}, {"ip6tables", "ip6", "ip6tables-save"}} {
		out, ok := c.output(fam.key, fam.source)
		if !ok {
			continue
		}
		rules, chains, nf, err := parse.ParseIptablesSave(strings.NewReader(out), fam.family)
		if err != nil {
			c.note(fam.source, err.Error())
			continue
		}
		ipt.NfBackend = ipt.NfBackend || nf
		ipt.Rules = append(ipt.Rules, rules...)
		ipt.Chains = append(ipt.Chains, chains...)
	}
	var nft *facts.Firewall
	if out, ok := c.output("nft-json", "nft"); ok {
		fw, err := parse.ParseNftFirewall(strings.NewReader(out))
		if err != nil {
			c.note("nft", err.Error())
		} else {
			if t, ok := c.output("nft-text", "nft -a"); ok {
				if err := withNftTexts(&fw, strings.NewReader(t)); err != nil {
					c.note("nft -a", err.Error())
				}
			}
			nft = &fw
		}
	}
	c.snap.Firewall = MergeFirewall(nft, ipt)
}

// iptablesTables are the tables iptables-nft creates in nftables.
var iptablesTables = map[string]bool{"filter": true, "nat": true, "mangle": true, "raw": true, "security": true}

// IptablesView is what iptables-save and ip6tables-save print.
type IptablesView struct {
	Rules     []facts.FirewallRule
	Chains    []facts.FirewallChain
	NfBackend bool // iptables-nft: its tables are in nft's ruleset too
}

// MergeFirewall joins nft's ruleset (nil when nft did not answer) with
// iptables-save's. iptables-nft tables show up in both tools; iptables-save
// reads them better (rule positions, policy counters), so nft's copy of them
// is left out.
func MergeFirewall(nft *facts.Firewall, ipt IptablesView) facts.Firewall {
	var fw facts.Firewall
	fw.Iptables = len(ipt.Rules) > 0
	dup := func(family, table string) bool {
		return fw.Iptables && ipt.NfBackend && (family == "ip" || family == "ip6") && iptablesTables[table]
	}
	if nft != nil {
		fw.Nftables = true
		fw.Counters = nft.Counters
		for _, r := range nft.Rules {
			if !dup(r.Family, r.Table) {
				fw.Rules = append(fw.Rules, r)
			}
		}
		for _, ch := range nft.Chains {
			if !dup(ch.Family, ch.Table) {
				fw.Chains = append(fw.Chains, ch)
			}
		}
	}
	fw.Rules = append(fw.Rules, ipt.Rules...)
	if fw.Iptables {
		fw.Chains = append(fw.Chains, ipt.Chains...)
	}
	return fw
}
