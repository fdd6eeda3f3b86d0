package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// BacklogTarget is the netdev_max_backlog the relay case raised Synology's 1000 to.
const BacklogTarget = 5000

var backlogDrops = Check{
	Doc: `Sums the "dropped" column of /proc/net/softnet_stat: packets the kernel
discarded because a CPU's input backlog (net.core.netdev_max_backlog packets)
was full. The counters are since boot, so a drop above 0 is a note: it says the
backlog overflowed some time, not that it does under tunnel load; doctor's
bench counts the drops during each tunnel run and makes that a warning. The
tuning guide and the relay case raise netdev_max_backlog (1000 → 5000 in the
relay case) together with the UDP buffers. Where net.core.dev_weight was
lowered below its default 64 (the packets a backlog hands on per softirq
round, in the tuning guide's list), each backlog drains slower: that is
evidence too, and the fix restores 64; at 64 or above it says nothing.`,
	Run: runBacklogDrops,
}

func runBacklogDrops(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.Softnet) == 0 {
		return nil, missing(s, "softnet statistics", "softnet")
	}
	var total uint64
	var per []string
	for _, c := range s.Softnet {
		total += c.Dropped
		if c.Dropped > 0 {
			per = append(per, fmt.Sprintf("cpu%d=%d", c.CPU, c.Dropped))
		}
	}
	if total == 0 {
		return nil, nil
	}
	f := finding.Finding{
		ID:       catalog.NetBacklogDrops,
		Severity: finding.Info,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("%d packets dropped at full backlog queues since boot", total),
		Detail: "Received packets wait in a per-CPU backlog until softirq processing takes them; when it holds " +
			"net.core.netdev_max_backlog packets the next ones are dropped, and TCP inside the tunnel backs off. " +
			"These drops are counted since boot: a tunnel run (wgperf doctor, wgperf bench) shows whether they grow under its load.",
		Evidence: []finding.Evidence{finding.Evidence{Source: "/proc/net/softnet_stat", Key: "dropped since boot", Value: fmt.Sprintf("%d (%s)", total, strings.Join(per, " ")), Threshold: "0"}.Of(float64(total), finding.Packets)},
	}
	// A child network namespace has no netdev_max_backlog (the machine's is
	// the only one): there the fix is the command for the machine, not an
	// action wgperf could plan here.
	cur, ok := sysctlInt(s, "net.core.netdev_max_backlog")
	if !ok {
		f.Fixes = []finding.Fix{{
			Description: fmt.Sprintf("Raise net.core.netdev_max_backlog to %d in the machine's initial network namespace (this host has no such sysctl: a container or namespace shares the machine's)", BacklogTarget),
			Commands:    []string{fmt.Sprintf("sysctl -w net.core.netdev_max_backlog=%d", BacklogTarget)},
		}}
		return []finding.Finding{f}, nil
	}
	f.Evidence = append(f.Evidence, finding.Evidence{Source: "sysctl", Key: "net.core.netdev_max_backlog", Value: itoa(cur)}.Of(float64(cur), finding.Packets))
	next := int64(BacklogTarget)
	if cur >= next {
		next = cur * 2
	}
	f.Fixes = append(f.Fixes, sysctlFix(fmt.Sprintf("Raise net.core.netdev_max_backlog to %d", next), "net.core.netdev_max_backlog", itoa(next))...)
	ev, fix := devWeightLowered(s)
	f.Evidence, f.Fixes = append(f.Evidence, ev...), append(f.Fixes, fix...)
	return []finding.Finding{f}, nil
}

// Imbalance thresholds: the busiest CPU must handle at least imbalanceRatio
// times the mean of the others, over at least imbalanceMinPackets packets (so
// an idle host's noise does not count).
const (
	imbalanceRatio      = 4.0
	imbalanceMinPackets = 100000
)

var softirqImbalance = Check{
	Doc: `Compares the per-CPU "processed" counts of /proc/net/softnet_stat: when the
busiest CPU handled at least 4× the mean of the other CPUs (over at least
100000 packets), receive processing is not spread. Warning when that CPU also
ran out of budget (time_squeeze > 0), info otherwise. In the relay case the NAS handled
33.7K packets/s on CPU 2 against 3-5K on the others, and throughput collapsed
every 15-20 s as that CPU saturated. Offers RPS masks for the uplinks whose rx
queues have none.`,
	Run: runSoftirqImbalance,
}

func runSoftirqImbalance(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.Softnet) == 0 {
		return nil, missing(s, "softnet statistics", "softnet")
	}
	if len(s.Softnet) < 2 {
		return nil, nil
	}
	busiest := s.Softnet[0]
	var total uint64
	for _, c := range s.Softnet {
		total += c.Processed
		if c.Processed > busiest.Processed {
			busiest = c
		}
	}
	if total < imbalanceMinPackets {
		return nil, nil
	}
	others := float64(total-busiest.Processed) / float64(len(s.Softnet)-1)
	ratio := float64(busiest.Processed) / max(others, 1)
	if ratio < imbalanceRatio {
		return nil, nil
	}
	sev := finding.Info
	if busiest.TimeSqueeze > 0 {
		sev = finding.Warning
	}
	f := finding.Finding{
		ID:       catalog.CPUSoftirqImbalance,
		Severity: sev,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("CPU %d processed %.0f%% of received packets (%.1f× the other CPUs' mean)", busiest.CPU, 100*float64(busiest.Processed)/float64(total), ratio),
		Detail: "Receive processing for the tunnel's traffic runs on one CPU. When it saturates, its backlog fills, packets are " +
			"dropped or reordered and TCP backs off — throughput oscillates. Receive Packet Steering spreads the work.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/net/softnet_stat", Key: fmt.Sprintf("cpu%d processed", busiest.CPU), Value: utoa(busiest.Processed), Threshold: fmt.Sprintf(">= %.0f× mean of others (%.0f)", imbalanceRatio, others)}.Of(float64(busiest.Processed), finding.Packets),
			finding.Evidence{Source: "/proc/net/softnet_stat", Key: fmt.Sprintf("cpu%d time_squeeze", busiest.CPU), Value: utoa(busiest.TimeSqueeze), Threshold: "0"}.Of(float64(busiest.TimeSqueeze), finding.Count),
		},
	}
	mask := cpuMask(len(s.Softnet))
	for _, dev := range sortedKeys(uplinks(s)) {
		l := findLink(s, dev)
		if l == nil || rpsEnabled(l) {
			continue
		}
		f.Fixes = append(f.Fixes, rpsFix(s, dev, mask)...)
	}
	if len(f.Fixes) == 0 {
		f.Fixes = append(f.Fixes, finding.Fix{
			Description: "Spread the network interrupts over the CPUs (RPS is already on)",
			Commands:    []string{"grep -E 'eth|enp|ens|wg' /proc/interrupts", "systemctl enable --now irqbalance"},
		})
	}
	return []finding.Finding{f}, nil
}

// cpuMask is the hex mask of the first n CPUs, e.g. 4 → "f".
func cpuMask(n int) string {
	if n <= 0 {
		return "1"
	}
	digits := make([]byte, 0, n/4+1)
	for rem := n; rem > 0; rem -= 4 {
		bits := min(rem, 4)
		digits = append(digits, "0137f"[bits])
	}
	// digits were produced least significant first.
	for i, j := 0, len(digits)-1; i < j; i, j = i+1, j-1 {
		digits[i], digits[j] = digits[j], digits[i]
	}
	out := strings.TrimLeft(string(digits), "0")
	// The kernel expects 32-bit groups separated by commas on big machines.
	var groups []string
	for len(out) > 8 {
		groups = append([]string{out[len(out)-8:]}, groups...)
		out = out[:len(out)-8]
	}
	return strings.Join(append([]string{out}, groups...), ",")
}

func rpsEnabled(l *facts.Link) bool {
	if len(l.RPSCPUs) == 0 {
		return false
	}
	for _, m := range l.RPSCPUs {
		if strings.Trim(m, "0,") != "" {
			return true
		}
	}
	return false
}

func rpsFix(s *facts.Snapshot, dev, mask string) []finding.Fix {
	r, err := remedy.RPS(dev, mask, platform(s))
	return fixes(fmt.Sprintf("Enable Receive Packet Steering on %s over CPUs %s", dev, mask), r, err)
}
