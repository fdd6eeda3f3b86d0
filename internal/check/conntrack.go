package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// conntrackPressure is the fill level at which the table counts as near full.
const conntrackPressure = 0.8

// conntrackFloor is the nf_conntrack_max wgperf raises a small table to; a
// larger one it doubles.
const conntrackFloor = 262144

var conntrackTablePressure = Check{
	Doc: `Fires when nf_conntrack_count is at least 80% of nf_conntrack_max, or when
conntrack -S shows insert_failed, drop or early_drop above 0 — new flows were
refused or old ones evicted. Critical when the table is full. The tuning guide: with
hundreds of concurrent connections through a stateful firewall, raise
nf_conntrack_max (and the hash buckets), or stop tracking tunnel traffic that
no NAT rule needs. More than 8 entries per hash bucket
(nf_conntrack_count / nf_conntrack_buckets) is evidence too: every packet's
lookup walks a chain that long; the fix then resizes the hash so the raised
table keeps at most 8 per bucket (the module's hashsize parameter, kept in
modprobe.d; the hash is the machine's, set in the initial namespace).`,
	Run: runConntrackTablePressure,
}

func runConntrackTablePressure(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	ct := s.Conntrack
	if ct == nil {
		if why := noteFor(s, "conntrack"); why != "" {
			return nil, skipf("conntrack not collected (%s)", why)
		}
		return nil, nil // not loaded: nothing to fill up
	}
	full := ct.Max > 0 && float64(ct.Count) >= conntrackPressure*float64(ct.Max)
	lost := ct.InsertFailed + ct.Drop + ct.EarlyDrop
	if !full && lost == 0 {
		return nil, nil
	}
	sev := finding.Warning
	if ct.Max > 0 && ct.Count >= ct.Max {
		sev = finding.Critical
	}
	title := fmt.Sprintf("Conntrack table %d of %d entries (%.0f%%)", ct.Count, ct.Max, 100*float64(ct.Count)/float64(max(ct.Max, 1)))
	if lost > 0 {
		title += fmt.Sprintf(", %d entries refused or evicted", lost)
	}
	f := finding.Finding{
		ID:       catalog.ConntrackTablePressure,
		Severity: sev,
		Host:     hostOf(s),
		Title:    title,
		Detail: "When the connection tracking table is full the kernel evicts entries (early_drop) or refuses new flows " +
			"(drop, insert_failed): new connections through the tunnel stall or fail.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/sys/net/netfilter/nf_conntrack_count", Key: "nf_conntrack_count", Value: itoa(ct.Count),
				Threshold: fmt.Sprintf("< %d (%.0f%% of nf_conntrack_max %d)", int64(conntrackPressure*float64(ct.Max)), 100*conntrackPressure, ct.Max)}.Of(float64(ct.Count), finding.Count),
			finding.Evidence{Source: "conntrack -S", Key: "insert_failed+drop+early_drop", Value: fmt.Sprintf("%d+%d+%d", ct.InsertFailed, ct.Drop, ct.EarlyDrop), Threshold: "0"}.Of(float64(ct.InsertFailed+ct.Drop+ct.EarlyDrop), finding.Count),
		},
	}
	chains := conntrackChains(ct)
	f.Evidence = append(f.Evidence, chains...)
	want := max(ct.Max*2, conntrackFloor)
	f.Fixes = append(f.Fixes, sysctlFix(fmt.Sprintf("Raise nf_conntrack_max from %d to %d (set in the initial network namespace)", ct.Max, want),
		"net.netfilter.nf_conntrack_max", itoa(want))...)
	if len(chains) > 0 {
		f.Fixes = append(f.Fixes, conntrackBucketsFix(s, ct, want)...)
	}
	for _, w := range s.WireGuard {
		if !tunnelNeedsConntrack(s, w.Name) && !tunnelUntracked(s, w) {
			f.Fixes = append(f.Fixes, notrackFix(s, w)...)
		}
	}
	return []finding.Finding{f}, nil
}

var conntrackTunnelTracked = Check{
	Doc: `Info. Fires when conntrack is loaded, a WireGuard interface's traffic and
its UDP listen port have no NOTRACK rule, no NAT rule (masquerade, snat,
dnat) matches that interface or all interfaces, and no stateful filter decides
on traffic by its connection state ("ct state established accept" in a chain
that drops the rest: untracked packets would not match it). The tuning guide:
tracking costs per-packet work and table space; tunnel traffic that no NAT or
stateful rule needs can skip it with notrack rules in the raw priority.`,
	Run: runConntrackTunnelTracked,
}

func runConntrackTunnelTracked(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if s.Conntrack == nil {
		if why := noteFor(s, "conntrack"); why != "" {
			return nil, skipf("conntrack not collected (%s)", why)
		}
		return nil, nil
	}
	if !s.Firewall.Nftables && !s.Firewall.Iptables && len(s.Firewall.Rules) == 0 {
		if why := noteFor(s, "nft", "iptables"); why != "" {
			return nil, skipf("firewall rules not collected (%s)", why)
		}
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		if tunnelUntracked(s, w) || tunnelNeedsConntrack(s, w.Name) {
			continue
		}
		out = append(out, finding.Finding{
			ID:        catalog.ConntrackTunnelTracked,
			Severity:  finding.Info,
			Host:      hostOf(s),
			Interface: w.Name,
			Title:     fmt.Sprintf("Traffic of %s and its UDP port %d is connection-tracked", w.Name, w.ListenPort),
			Detail: "No NAT rule matches this tunnel, so tracking its packets only costs CPU time and conntrack table space. " +
				"Keep tracking if a stateful filter (ct state) must see the tunnel's flows.",
			Evidence: []finding.Evidence{
				finding.Evidence{Source: "/proc/sys/net/netfilter/nf_conntrack_count", Key: "conntrack loaded", Value: fmt.Sprintf("%d entries", s.Conntrack.Count)}.Of(float64(s.Conntrack.Count), finding.Count),
				{Source: firewallSource(s), Key: "notrack rule for " + w.Name, Value: "none"},
				{Source: firewallSource(s), Key: "NAT rule matching " + w.Name, Value: "none"},
			},
			Fixes: notrackFix(s, w),
		})
	}
	return out, nil
}

// tunnelUntracked reports whether a NOTRACK rule already covers the tunnel.
func tunnelUntracked(s *facts.Snapshot, w facts.WGInterface) bool {
	port := strconv.Itoa(w.ListenPort)
	for _, r := range s.Firewall.Rules {
		if !r.NoTrack {
			continue
		}
		if (r.IIf != "" && ifaceMatches(r.IIf, w.Name)) || (r.OIf != "" && ifaceMatches(r.OIf, w.Name)) {
			return true
		}
		if w.ListenPort > 0 && strings.Contains(r.Text, port) {
			return true
		}
	}
	return false
}

// tunnelNeedsConntrack reports whether a NAT rule may apply to the tunnel's
// traffic (one matching its interface, or one matching no interface at all),
// or a stateful filter decides on it (statefulFilter).
func tunnelNeedsConntrack(s *facts.Snapshot, iface string) bool {
	if statefulFilter(s) {
		return true
	}
	for _, r := range s.Firewall.Rules {
		if !isNATRule(r) {
			continue
		}
		if (r.IIf == "" && r.OIf == "") || (r.IIf != "" && ifaceMatches(r.IIf, iface)) || (r.OIf != "" && ifaceMatches(r.OIf, iface)) {
			return true
		}
	}
	return false
}

// statefulFilter reports a filter that lets packets through by their
// connection state: an accept of "established" packets (nft ct state,
// iptables --ctstate or --state) in a chain on the input, forward or output
// path that drops what it does not accept (a drop policy, or a later drop or
// reject of everything). NOTRACK makes the tunnel's packets "untracked",
// which that accept no longer matches: they would be dropped.
func statefulFilter(s *facts.Snapshot) bool {
	reached := chainHooks(s.Firewall)
	policy := map[string]string{}
	for _, c := range s.Firewall.Chains {
		policy[c.Backend+" "+c.Family+" "+c.Table+" "+c.Name] = strings.ToLower(c.Policy)
	}
	stateful := map[string]bool{} // chains with an accept of established packets so far
	for _, r := range s.Firewall.Rules {
		k := ruleChainKey(r)
		if !filterPath(reached[k]) || r.Table == remedy.NftTable {
			continue
		}
		t := strings.ToLower(r.Text)
		v := strings.ToLower(r.Verdict)
		switch {
		case v == "accept" && ctStateMatch(r) && strings.Contains(t, "established"):
			stateful[k] = true
			if policy[k] == "drop" {
				return true
			}
		case stateful[k] && (v == "drop" || v == "reject") && r.Protocol == "" && r.IIf == "" && r.OIf == "" && !ctStateMatch(r):
			return true
		}
	}
	return false
}

// filterPath reports hooks on the input, forward or output path.
func filterPath(hooks []string) bool {
	for _, h := range hooks {
		if h == "input" || h == "forward" || h == "output" {
			return true
		}
	}
	return false
}

func isNATRule(r facts.FirewallRule) bool {
	v := strings.ToLower(r.Verdict + " " + r.Text)
	for _, k := range []string{"masquerade", "snat", "dnat", "redirect", "netmap"} {
		if strings.Contains(v, k) {
			return true
		}
	}
	return false
}

// conntrackBucketsFix resizes the hash so the raised table (newMax entries)
// keeps at most conntrackChainLimit entries per bucket: the next power of
// two at or above newMax/conntrackChainLimit, always more than the hash has
// when its chains are too long. The hash is the machine's: a host that is a
// child network namespace (no net.core.netdev_max_backlog) gets the command
// for the machine instead of an action.
func conntrackBucketsFix(s *facts.Snapshot, ct *facts.Conntrack, newMax int64) []finding.Fix {
	want := int64(1024)
	for want < (newMax+conntrackChainLimit-1)/conntrackChainLimit {
		want *= 2
	}
	if want <= ct.Buckets || want > remedy.MaxConntrackBuckets {
		return nil
	}
	desc := fmt.Sprintf("Resize the conntrack hash from %d to %d buckets: at most %d entries per bucket once the table holds %d", ct.Buckets, want, conntrackChainLimit, newMax)
	if _, ok := sysctlInt(s, "net.core.netdev_max_backlog"); !ok {
		return []finding.Fix{{Description: desc + " (on the machine: this host is a network namespace, the hash is the machine's)",
			Commands: []string{"sysctl -w net.netfilter.nf_conntrack_buckets=" + itoa(want)}}}
	}
	r, err := remedy.ConntrackBuckets(int(want))
	return fixes(desc, r, err)
}

// raisesBuckets: a findings file's hash size must be more than the host's
// hash has now (wgperf never shrinks it).
func raisesBuckets(h *facts.Snapshot, _ map[string]string, v string) error {
	if h.Conntrack == nil || h.Conntrack.Buckets <= 0 {
		return fmt.Errorf("cannot be checked: the host's conntrack hash size is not known")
	}
	if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= h.Conntrack.Buckets {
		return fmt.Errorf("would not raise the hash from %d buckets", h.Conntrack.Buckets)
	}
	return nil
}

// notrackFix exempts a tunnel from conntrack in a table of wgperf's own.
func notrackFix(s *facts.Snapshot, w facts.WGInterface) []finding.Fix {
	r, err := remedy.Notrack(w.Name, w.ListenPort, platform(s))
	return fixes(fmt.Sprintf("Stop tracking %s's traffic and its UDP port %d", w.Name, w.ListenPort), r, err)
}
