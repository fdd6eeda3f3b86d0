package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// Packet-processing budget thresholds: at least budgetMinSqueezes times out
// of budget, and at least one per budgetNoteRate packets processed, is a
// note; one per budgetWarnRate a warning.
const (
	budgetMinSqueezes = 1000
	budgetNoteRate    = 10000
	budgetWarnRate    = 1000
)

// The kernel's defaults, doubled: the tuning guide's first step
// ("net.core.netdev_budget = 600"; netdev_budget_usecs is 2000 on most kernels).
const (
	budgetTarget      = 600
	budgetUsecsTarget = 4000
)

var softirqBudget = Check{
	Doc: `Reads the time_squeeze column of /proc/net/softnet_stat: how often a CPU's
receive processing (net_rx_action) stopped with packets still waiting,
because it used up net.core.netdev_budget packets or
net.core.netdev_budget_usecs microseconds in one round. A note from 1000
squeezes and one per 10,000 packets processed, a warning from one per 1,000:
the backlog then waits for the next round, fills, and drops (net.backlog-drops)
while the tunnel's receiver falls behind. The tuning guide's first step for
packet processing: "sudo sysctl -w net.core.netdev_budget=600" (and
netdev_budget_usecs) "to clear buffered packets more efficiently", then
spreading the work over CPUs (RPS), which the fix offers beside it for uplinks
without a mask. Counters are since boot: bench and doctor show their growth
during each tunnel run.`,
	Run: runSoftirqBudget,
}

func runSoftirqBudget(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.Softnet) == 0 {
		return nil, missing(s, "softnet statistics", "softnet")
	}
	var processed, squeezed uint64
	var per []string
	for _, c := range s.Softnet {
		processed += c.Processed
		squeezed += c.TimeSqueeze
		if c.TimeSqueeze > 0 {
			per = append(per, fmt.Sprintf("cpu%d=%d", c.CPU, c.TimeSqueeze))
		}
	}
	if squeezed < budgetMinSqueezes || squeezed*budgetNoteRate < processed {
		return nil, nil
	}
	sev := finding.Info
	if squeezed*budgetWarnRate >= processed {
		sev = finding.Warning
	}
	f := finding.Finding{
		ID:       catalog.NetSoftirqBudget,
		Severity: sev,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("Receive processing ran out of budget %d times (one per %d packets)", squeezed, processed/max(squeezed, 1)),
		Detail: "Each round of receive processing handles at most net.core.netdev_budget packets within net.core.netdev_budget_usecs; " +
			"when it stops with packets still queued (time_squeeze), they wait for the next round while more arrive, the per-CPU " +
			"backlog fills and drops, and TCP inside the tunnel backs off. A larger budget lets a capable CPU clear more per round.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/net/softnet_stat", Key: "time_squeeze", Value: fmt.Sprintf("%d (%s)", squeezed, strings.Join(per, " ")),
				Threshold: fmt.Sprintf("< %d, or < 1 per %d packets processed", budgetMinSqueezes, budgetNoteRate)}.Of(float64(squeezed), finding.Count),
			finding.Evidence{Source: "/proc/net/softnet_stat", Key: "processed", Value: utoa(processed)}.Of(float64(processed), finding.Packets),
		},
	}
	type knob struct {
		key    string
		target int64
	}
	var unknown []string
	for _, k := range []knob{{"net.core.netdev_budget", budgetTarget}, {"net.core.netdev_budget_usecs", budgetUsecsTarget}} {
		cur, ok := sysctlInt(s, k.key)
		if !ok {
			unknown = append(unknown, k.key)
			continue
		}
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "sysctl", Key: k.key, Value: itoa(cur)}.Of(float64(cur), finding.Count))
		want := max(2*cur, k.target)
		f.Fixes = append(f.Fixes, sysctlFix(fmt.Sprintf("Raise %s from %d to %d", k.key, cur, want), k.key, itoa(want))...)
	}
	if len(unknown) > 0 {
		// A child network namespace has no netdev_budget of its own: it is the host's.
		f.Fixes = append(f.Fixes, finding.Fix{
			Description: "Read the budget on the host itself (not visible here), then double it (the tuning guide starts at netdev_budget=600)",
			Commands:    []string{"sysctl " + strings.Join(unknown, " ")},
		})
	}
	if len(s.Softnet) > 1 {
		mask := cpuMask(len(s.Softnet))
		for _, dev := range sortedKeys(uplinks(s)) {
			if l := findLink(s, dev); l != nil && !rpsEnabled(l) {
				f.Fixes = append(f.Fixes, rpsFix(s, dev, mask)...)
			}
		}
	}
	return []finding.Finding{f}, nil
}
