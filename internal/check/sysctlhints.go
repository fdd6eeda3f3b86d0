package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// The tuning guide lists these sysctls beside the buffers; each is judged
// here as evidence on the finding whose cause it can deepen, not alone: none
// of them is slow by itself.

// advWinScaleFrom is the first kernel that ignores tcp_adv_win_scale: 6.6
// sizes the advertised window from each socket's measured overhead
// (scaling_ratio) instead.
var advWinScaleFrom = [2]int{6, 6}

// windowShare is the share of a receive buffer that tcp_adv_win_scale n
// lets TCP advertise as window: space>>-n for n <= 0, space - space>>n
// above (the kernel's tcp_win_from_space).
func windowShare(n int64) float64 {
	if n <= 0 {
		return 1 / float64(int64(1)<<min(-n, 62))
	}
	return 1 - 1/float64(int64(1)<<min(n, 62))
}

// advWinScale says what net.ipv4.tcp_adv_win_scale does to the receive
// window: the share of tcp_rmem the window may take (1 where the kernel
// ignores it or the value is unknown) and the evidence that says so, none
// at the default 1.
func advWinScale(s *facts.Snapshot) (float64, []finding.Evidence) {
	n, ok := sysctlInt(s, "net.ipv4.tcp_adv_win_scale")
	if !ok {
		return 1, nil
	}
	before, known := kernelBefore(s, advWinScaleFrom[0], advWinScaleFrom[1])
	if known && !before {
		if n == 1 {
			return 1, nil
		}
		return 1, []finding.Evidence{finding.Evidence{Source: "sysctl", Key: "net.ipv4.tcp_adv_win_scale", Value: itoa(n),
			Threshold: fmt.Sprintf("ignored from kernel 6.6 (this one is %s): the window follows measured overhead", s.System.Kernel)}.Of(float64(n), finding.Count)}
	}
	share := windowShare(n)
	if n == 1 {
		return share, nil // the default: the fix's twice-the-BDP headroom is sized for it
	}
	kernel := "kernel before 6.6"
	if !known {
		kernel = "kernel version unknown: before 6.6 it counts"
	}
	return share, []finding.Evidence{finding.Evidence{Source: "sysctl", Key: "net.ipv4.tcp_adv_win_scale", Value: itoa(n),
		Threshold: fmt.Sprintf("advertised window = %s of the receive buffer (%s)", shareWords(share), kernel)}.Of(share, finding.Ratio)}
}

// shareWords renders 0.5 as "1/2", 0.75 as "3/4", 1 as "all".
func shareWords(share float64) string {
	if share >= 1 {
		return "all"
	}
	for den := 2; den <= 1<<20; den *= 2 {
		if num := share * float64(den); num == float64(int64(num)) {
			return fmt.Sprintf("%d/%d", int64(num), den)
		}
	}
	return fmt.Sprintf("%.3f", share)
}

// devWeightDefault is net.core.dev_weight's default: the packets one CPU's
// backlog hands to the stack per softirq round.
const devWeightDefault = 64

// devWeightLowered is the evidence and the fix when net.core.dev_weight was
// lowered below its default: each CPU's backlog then drains fewer packets
// per round and fills sooner under a tunnel's burst. Raised or default: none.
func devWeightLowered(s *facts.Snapshot) ([]finding.Evidence, []finding.Fix) {
	w, ok := sysctlInt(s, "net.core.dev_weight")
	if !ok || w >= devWeightDefault {
		return nil, nil
	}
	ev := finding.Evidence{Source: "sysctl", Key: "net.core.dev_weight", Value: itoa(w), Threshold: fmt.Sprintf(">= %d (the default)", devWeightDefault)}.Of(float64(w), finding.Packets)
	return []finding.Evidence{ev}, sysctlFix(fmt.Sprintf("Restore net.core.dev_weight to %d: each backlog drains only %d packets per softirq round", devWeightDefault, w),
		"net.core.dev_weight", itoa(devWeightDefault))
}

// backlogValues are the netdev_max_backlog values net.backlog-drops proposes.
var backlogValues = BaseOrDouble(BacklogTarget, BacklogTarget, maxInt)

// backlogSysctl is net.backlog-drops' rule for its sysctl fixes on a host:
// netdev_max_backlog raised as backlogValues allows, or dev_weight restored
// to its default where it is below it; never lowered.
func backlogSysctl(h *facts.Snapshot, p map[string]string, v string) error {
	switch {
	case p["key"] == "net.core.dev_weight" && v != itoa(devWeightDefault):
		return fmt.Errorf("sets net.core.dev_weight to its default %d only", devWeightDefault)
	case p["key"] != "net.core.dev_weight" && !backlogValues.match(v):
		return fmt.Errorf("sets net.core.netdev_max_backlog to %s only", backlogValues.what)
	}
	return raises(h, p, v)
}

// conntrackChainLimit is the entries per hash bucket above which lookups
// walk long chains: 8 was the kernel's own nf_conntrack_max per bucket.
const conntrackChainLimit = 8

// conntrackChains is the evidence that the table's entries outnumber its
// hash buckets more than conntrackChainLimit to one: every packet's lookup
// walks a chain that long (nf_conntrack_buckets).
func conntrackChains(ct *facts.Conntrack) []finding.Evidence {
	if ct == nil || ct.Buckets <= 0 || ct.Count <= conntrackChainLimit*ct.Buckets {
		return nil
	}
	per := float64(ct.Count) / float64(ct.Buckets)
	return []finding.Evidence{finding.Evidence{Source: "/proc/sys/net/netfilter/nf_conntrack_buckets", Key: "entries per hash bucket",
		Value:     fmt.Sprintf("%.1f (%d entries, %d buckets)", per, ct.Count, ct.Buckets),
		Threshold: fmt.Sprintf("<= %d", conntrackChainLimit)}.Of(per, finding.Ratio)}
}
