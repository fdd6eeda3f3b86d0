package collect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

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
	nft, note := readNft(ctx, t, texts)
	var ipt IptablesView
	for _, fam := range []struct{ tool, family string }{{"iptables-save", "ip"}, {"ip6tables-save", "ip6"}} {
		out, err := t.Run(ctx, fam.tool, "-c")
		if err != nil {
			continue // not installed, or no iptables: nft's view is all there is
		}
		rules, chains, nf, err := parse.ParseIptablesSave(bytes.NewReader(out), fam.family)
		if err != nil {
			note += fmt.Sprintf("%s unreadable: %v. ", fam.tool, err)
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

// readNft reads "nft -j list ruleset" and, with texts, fills the rules' text
// from "nft -a list ruleset", which findings quote; without it they show
// where to look.
func readNft(ctx context.Context, t target.Target, texts bool) (*facts.Firewall, string) {
	out, err := t.Run(ctx, "nft", "-j", "list", "ruleset")
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
	if out, err := t.Run(ctx, "nft", "-a", "list", "ruleset"); err == nil {
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
