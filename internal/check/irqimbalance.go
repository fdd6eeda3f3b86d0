package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// irqMinInterrupts is how many interrupts an uplink's queues must have taken
// before their spread is judged: an idle host's few thousand say nothing.
const irqMinInterrupts = 100000

var irqImbalance = Check{
	Doc: `Sums the /proc/interrupts rows of each uplink's queues per CPU (rows named
its PCI function owns (sysfs msi_irqs: a virtio NIC's "virtio2-input.0"),
or named after the uplink ("eth0-rx-0") or a slave of a bonded one). When the busiest CPU took at least 4× the mean of the
others (the ratio cpu.softirq-imbalance uses), over at least 100000
interrupts, the NIC's interrupts pile on one CPU, and the softirq work
that follows each one runs there too. In the remote users case the NAS
took 7-10× its idle interrupt rate during transfers and handled 33.7K
packets/s on CPU 2 against 3-5K on the others; throughput collapsed every
15-20 s as that CPU saturated. Counts are since boot: a note, a warning
when that CPU also ran out of softirq budget (time_squeeze). The fix
deals the queues' interrupts out over the CPUs, busiest queue first, each
to the CPU with the least dealt so far (/proc/irq/N/smp_affinity_list; the
value read before is written back on rollback); where one queue takes
half or more of them (a single-queue NIC, a virtio NIC's one receive
queue) interrupts cannot spread it, so RPS spreads its packets instead. Beside RPS it sets
net.core.netdev_tstamp_prequeue to 0 where it is 1: the tuning guide's
"set this to 0 to allow processing to be more evenly distributed across
CPU cores" (the kernel then timestamps packets on the CPU RPS picked,
not on the one that took the interrupt; it matters only with RPS).`,
	Run: runIRQImbalance,
}

// irqLoad is one uplink's queue interrupts, summed per CPU.
type irqLoad struct {
	dev    string
	rows   []facts.IRQ // the queues that took interrupts, in /proc/interrupts order
	perCPU []uint64
	total  uint64
}

func runIRQImbalance(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.IRQs) == 0 {
		return nil, nil // no NIC interrupts: veths, tun, or a container without /proc/interrupts rows
	}
	var out []finding.Finding
	for _, dev := range sortedKeys(uplinks(s)) {
		load, ok := uplinkIRQLoad(s, dev)
		if !ok || load.total < irqMinInterrupts || len(load.perCPU) < 2 {
			continue
		}
		busiest := 0
		for c, n := range load.perCPU {
			if n > load.perCPU[busiest] {
				busiest = c
			}
		}
		others := float64(load.total-load.perCPU[busiest]) / float64(len(load.perCPU)-1)
		ratio := float64(load.perCPU[busiest]) / max(others, 1)
		if ratio < imbalanceRatio {
			continue
		}
		out = append(out, irqImbalanceFinding(s, load, busiest, others, ratio))
	}
	return out, nil
}

// uplinkIRQLoad finds dev's queue interrupts: rows of its PCI function
// (sysfs msi_irqs) or named after it, or after its bond's slaves.
func uplinkIRQLoad(s *facts.Snapshot, dev string) (irqLoad, bool) {
	names := []string{dev}
	if l := findLink(s, dev); l != nil && l.Bond != nil {
		names = append(names, l.Bond.Slaves...)
	}
	load := irqLoad{dev: dev}
	for _, q := range s.IRQs {
		if !slices.ContainsFunc(names, func(n string) bool { return servesDevice(q, n) }) {
			continue
		}
		var sum uint64
		for c, n := range q.PerCPU {
			if c >= len(load.perCPU) {
				load.perCPU = append(load.perCPU, make([]uint64, c+1-len(load.perCPU))...)
			}
			load.perCPU[c] += n
			sum += n
		}
		if sum > 0 {
			load.rows = append(load.rows, q)
			load.total += sum
		}
	}
	return load, len(load.rows) > 0
}

// servesDevice: the interrupt is dev's by sysfs, or by its name
// ("eth0", "eth0-TxRx-3", "eth0@pci:...").
func servesDevice(q facts.IRQ, dev string) bool {
	return q.Device == dev || q.Name == dev || strings.HasPrefix(q.Name, dev+"-") || strings.HasPrefix(q.Name, dev+"@")
}

func irqImbalanceFinding(s *facts.Snapshot, load irqLoad, busiest int, others, ratio float64) finding.Finding {
	sev := finding.Info
	var squeeze uint64
	for _, c := range s.Softnet {
		if c.CPU == busiest {
			squeeze = c.TimeSqueeze
		}
	}
	if squeeze > 0 {
		sev = finding.Warning
	}
	var queues []string
	for _, q := range load.rows {
		queues = append(queues, q.IRQ+" "+q.Name)
	}
	f := finding.Finding{
		ID:       catalog.CPUIRQImbalance,
		Severity: sev,
		Host:     hostOf(s),
		Title: fmt.Sprintf("CPU %d took %.0f%% of %s's interrupts (%.1f× the other CPUs' mean)",
			busiest, 100*float64(load.perCPU[busiest])/float64(load.total), load.dev, ratio),
		Detail: "Each interrupt of the NIC starts receive processing on the CPU that took it. With every queue's interrupt on one CPU, " +
			"that CPU decrypts, routes and queues the whole tunnel's packets while the others idle; when it saturates, its backlog " +
			"overflows, packets arrive out of order and TCP backs off. Counted since boot.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/interrupts", Key: fmt.Sprintf("cpu%d interrupts of %s", busiest, load.dev), Value: utoa(load.perCPU[busiest]),
				Threshold: fmt.Sprintf(">= %.0f× mean of others (%.0f)", imbalanceRatio, others)}.Of(float64(load.perCPU[busiest]), finding.Count),
			finding.Evidence{Source: "/proc/interrupts", Key: "queues of " + load.dev, Value: strings.Join(queues, ", ")}.Of(float64(len(load.rows)), finding.Count),
			finding.Evidence{Source: "/proc/net/softnet_stat", Key: fmt.Sprintf("cpu%d time_squeeze", busiest), Value: utoa(squeeze), Threshold: "0"}.Of(float64(squeeze), finding.Count),
		},
	}
	ncpu := len(load.perCPU)
	var dealt []uint64
	f.Fixes, dealt = spreadQueueFixes(load, ncpu)
	if !stillImbalanced(dealt) {
		if len(f.Fixes) == 0 { // a queue name no command may carry
			f.Fixes = append(f.Fixes, finding.Fix{
				Description: fmt.Sprintf("Spread %s's queue interrupts over the CPUs by hand (echo CPU > /proc/irq/N/smp_affinity_list)", load.dev),
				Commands:    []string{"cat /proc/interrupts"},
			})
		}
		return f
	}
	// One queue carries most of it: its interrupt can only move, not
	// spread. RPS hands its packets to every CPU after the interrupt.
	l := findLink(s, load.dev)
	if l != nil && !rpsEnabled(l) {
		f.Fixes = append(f.Fixes, rpsFix(s, load.dev, cpuMask(ncpu))...)
	}
	if v, ok := sysctlInt(s, "net.core.netdev_tstamp_prequeue"); ok && v != 0 && l != nil {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "sysctl", Key: "net.core.netdev_tstamp_prequeue", Value: itoa(v), Threshold: "0 with RPS"}.Of(float64(v), finding.Flag))
		f.Fixes = append(f.Fixes, sysctlFix("Timestamp received packets on the CPU RPS picks (net.core.netdev_tstamp_prequeue=0)", "net.core.netdev_tstamp_prequeue", "0")...)
	}
	if len(f.Fixes) == 0 {
		f.Fixes = append(f.Fixes, finding.Fix{
			Description: fmt.Sprintf("Give %s more queues where its driver has them (ethtool -l shows the maximum), then spread their interrupts: RPS is on already", load.dev),
			Commands:    []string{shell.Join("ethtool", "-l", load.dev)},
		})
	}
	return f
}

// stillImbalanced: with the queues dealt as planned, the busiest CPU still
// takes imbalanceRatio times the others' mean (one queue carries it).
func stillImbalanced(dealt []uint64) bool {
	if len(dealt) < 2 {
		return false
	}
	top := slices.Max(dealt)
	var total uint64
	for _, n := range dealt {
		total += n
	}
	others := float64(total-top) / float64(len(dealt)-1)
	return float64(top)/max(others, 1) >= imbalanceRatio
}

// spreadQueueFixes deals the queues out busiest first, each to the CPU with
// the least interrupts dealt so far (its own CPU on a tie), and moves those
// that land on another CPU than the one that takes most of theirs now. It
// returns the interrupts dealt to each CPU too.
func spreadQueueFixes(load irqLoad, ncpu int) ([]finding.Fix, []uint64) {
	type queue struct {
		q         facts.IRQ
		sum       uint64
		now, want int
	}
	qs := make([]queue, len(load.rows))
	for i, q := range load.rows {
		qs[i] = queue{q: q, now: slices.Index(q.PerCPU, slices.Max(q.PerCPU))}
		for _, n := range q.PerCPU {
			qs[i].sum += n
		}
	}
	slices.SortStableFunc(qs, func(a, b queue) int { return cmp.Compare(b.sum, a.sum) })
	dealt := make([]uint64, ncpu)
	for i := range qs {
		best := qs[i].now
		for c := range dealt {
			if dealt[c] < dealt[best] {
				best = c
			}
		}
		qs[i].want = best
		dealt[best] += qs[i].sum
	}
	var out []finding.Fix
	for _, q := range qs {
		if q.want == q.now {
			continue
		}
		r, err := remedy.IRQAffinity(q.q.IRQ, q.q.Name, fmt.Sprint(q.want))
		out = append(out, fixes(fmt.Sprintf("Move interrupt %s (%s) to CPU %d", q.q.IRQ, q.q.Name, q.want), r, err)...)
	}
	return out, dealt
}
