package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

var bondHashPolicy = Check{
	Doc: `Fires for every bond in 802.3ad (LACP) mode whose xmit_hash_policy is
layer2 or layer2+3. Both ignore ports, so every tunnel and flow between the
same two hosts hashes onto one slave (one tunnel, one UDP flow, does under any
hash). In the ECMP-over-bonding case a 3×1G LACP bond gave 947 Mbit/s until the
policy became layer3+4 (1.89 Gbit/s). Warning when the bond carries an endpoint
or default route, info otherwise.`,
	Run: runBondHashPolicy,
}

func runBondHashPolicy(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.Links) == 0 {
		return nil, missing(s, "links", "ip link")
	}
	up := uplinks(s)
	var out []finding.Finding
	for _, l := range s.Links {
		b := l.Bond
		if b == nil || !strings.HasPrefix(b.Mode, "802.3ad") {
			continue
		}
		policy := strings.Fields(b.XmitHashPolicy)
		if len(policy) == 0 || (policy[0] != "layer2" && policy[0] != "layer2+3") {
			continue
		}
		sev := finding.Info
		if up[l.Name] {
			sev = finding.Warning
		}
		out = append(out, finding.Finding{
			ID:        catalog.BondHashPolicy,
			Severity:  sev,
			Host:      hostOf(s),
			Interface: l.Name,
			Title:     fmt.Sprintf("Bond %s (802.3ad, %d slaves) hashes on %s", l.Name, len(b.Slaves), policy[0]),
			Detail: "The transmit hash ignores ports, so every tunnel and flow between the same two hosts leaves by the same slave " +
				"and together they cannot exceed one link's speed; layer3+4 spreads flows and tunnels on different ports across the slaves. " +
				"One tunnel is one UDP flow and stays on one slave under either hash: the gain needs several tunnels (fix ecmp) or flows. " +
				"The kernel's bonding documentation warns that layer3+4 is not fully 802.3ad compliant: a fragmented packet's " +
				"fragments carry no ports and may leave by another slave than the flow's unfragmented packets, and arrive out of order. " +
				"A tunnel whose packets fit the path (no mtu.tunnel-too-large) sends no fragments.",
			Evidence: []finding.Evidence{
				{Source: "/sys/class/net/" + l.Name + "/bonding/mode", Key: "mode", Value: b.Mode},
				{Source: "/sys/class/net/" + l.Name + "/bonding/xmit_hash_policy", Key: "xmit_hash_policy", Value: b.XmitHashPolicy, Threshold: "layer3+4"},
				{Source: "/sys/class/net/" + l.Name + "/bonding/slaves", Key: "slaves", Value: strings.Join(b.Slaves, " ")},
			},
			Fixes: bondHashFix(s, l.Name),
		})
	}
	return out, nil
}

func bondHashFix(s *facts.Snapshot, bond string) []finding.Fix {
	r, err := remedy.BondHash(bond, "layer3+4", platform(s), uciSection(s, bond))
	return fixes("Hash "+bond+" on layer3+4", r, err)
}
