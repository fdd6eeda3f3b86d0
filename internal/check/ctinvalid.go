package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

var conntrackInvalidDrops = Check{
	Doc: `Looks for firewall rules that drop what connection tracking marks invalid
(nft "ct state invalid drop", iptables "-m conntrack --ctstate INVALID -j DROP"
or "-m state --state INVALID") and counted drops, beside conntrack -S's invalid
count and the TCP tracking settings. Conntrack marks a TCP packet invalid when
it cannot follow the connection: a segment outside the window it tracked
(reordering, losses it did not see, asymmetric paths), or a connection it has
no entry for (after a table flush, a failover, an entry that timed out) when
nf_conntrack_tcp_loose is 0. Such a rule then drops the connection's packets
and it stalls or dies. Warning when the rule counted drops; a note when it has
no counter and conntrack counted invalid packets. The tuning guide: set
nf_conntrack_tcp_be_liberal to 1 ("to avoid marking TCP state violations as
invalid") and nf_conntrack_tcp_ignore_invalid_rst; a loose of 0 goes back to
the kernel's default 1. Drops that grow during a tunnel bench show in its
counters.`,
	Run: runConntrackInvalidDrops,
}

// invalidDrop is a rule that drops what conntrack marks invalid.
func invalidDrop(r facts.FirewallRule) bool {
	v := strings.ToLower(r.Verdict)
	if v != "drop" && v != "reject" {
		return false
	}
	t := strings.ToLower(r.Text)
	for _, m := range []string{"ct state invalid", "--ctstate invalid", "--state invalid"} {
		if strings.Contains(t, m) {
			return true
		}
	}
	return false
}

func runConntrackInvalidDrops(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		return nil, missing(s, "firewall rules", "nft", "iptables")
	}
	if s.Conntrack == nil {
		if why := noteFor(s, "conntrack"); why != "" {
			return nil, skipf("conntrack not collected (%s)", why)
		}
		return nil, nil // not loaded: nothing is marked invalid
	}
	var out []finding.Finding
	for _, r := range s.Firewall.Rules {
		if !invalidDrop(r) {
			continue
		}
		switch {
		case r.HasCounter && r.Packets > 0:
			out = append(out, invalidFinding(s, r, finding.Warning))
		case !r.HasCounter && s.Conntrack.Invalid > 0:
			out = append(out, invalidFinding(s, r, finding.Info))
		}
	}
	return out, nil
}

func invalidFinding(s *facts.Snapshot, r facts.FirewallRule, sev finding.Severity) finding.Finding {
	f := finding.Finding{
		ID:       catalog.ConntrackInvalidDrops,
		Severity: sev,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("Rule %s dropped %d packets conntrack marked invalid", ruleName(r), r.Packets),
		Detail: "Connection tracking marks a packet invalid when it cannot follow its connection: a TCP segment outside the " +
			"window it tracked (reordering, losses it did not see, a path it sees only one way) or, with nf_conntrack_tcp_loose " +
			"0, any packet of a connection it has no entry for (after a table flush, a firewall failover, an entry that timed " +
			"out). This rule drops them, so those connections stall or die while new ones work.",
		Evidence: []finding.Evidence{{Source: ruleSource(r), Key: fmt.Sprintf("%s %s %s", r.Family, r.Table, r.Chain), Value: ruleTextOr(r)}},
	}
	if r.HasCounter {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: ruleSource(r), Key: "rule counter", Value: utoa(r.Packets) + " packets", Threshold: "0"}.Of(float64(r.Packets), finding.Packets))
	} else {
		f.Title = fmt.Sprintf("Rule %s drops what conntrack marks invalid (%d invalid packets counted, none by the rule)", ruleName(r), s.Conntrack.Invalid)
		f.Detail += " The rule has no counter, so how many of them it dropped is unknown."
	}
	f.Evidence = append(f.Evidence, finding.Evidence{Source: "conntrack -S", Key: "invalid", Value: utoa(s.Conntrack.Invalid)}.Of(float64(s.Conntrack.Invalid), finding.Packets))
	type setting struct{ key, want, why string }
	for _, c := range []setting{
		{"net.netfilter.nf_conntrack_tcp_loose", "1", "pick up connections it has no entry for (the kernel's default)"},
		{"net.netfilter.nf_conntrack_tcp_be_liberal", "1", "accept TCP segments outside the window it tracked"},
		{"net.netfilter.nf_conntrack_tcp_ignore_invalid_rst", "1", "accept out-of-window RSTs"},
	} {
		v, ok := s.Sysctls[c.key]
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		ev := finding.Evidence{Source: "sysctl", Key: c.key, Value: v, Threshold: c.want}
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			ev = ev.Of(n, finding.Flag)
		}
		f.Evidence = append(f.Evidence, ev)
		if v != c.want {
			f.Fixes = append(f.Fixes, sysctlFix(fmt.Sprintf("Let conntrack %s: set %s to %s", c.why, c.key, c.want), c.key, c.want)...)
		}
	}
	if len(f.Fixes) == 0 {
		f.Fixes = []finding.Fix{{
			Description: "Find which connections conntrack loses (it logs each invalid packet while this is on)",
			Commands:    []string{"sysctl -w net.netfilter.nf_conntrack_log_invalid=6", "dmesg -w | grep nf_ct"},
		}}
	}
	return f
}
