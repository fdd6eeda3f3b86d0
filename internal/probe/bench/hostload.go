package bench

import (
	"cmp"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// NICInterrupts is how many interrupts one NIC's queues took during a run,
// per CPU. In the remote users case the NAS took 7-10x its idle interrupt
// rate during transfers, and 33.7K packets/s on CPU 2 against 3-5K on the
// others: the per-CPU split says whether one CPU takes the tunnel's NIC alone.
type NICInterrupts struct {
	Device string   `json:"device"`
	PerCPU []uint64 `json:"per_cpu"`
	Total  uint64   `json:"total"`
}

// load fills the run's time, context switches and NIC interrupts.
func (d *HostDelta) load(before, after Sample) {
	if !before.At.IsZero() && after.At.After(before.At) {
		d.Seconds = after.At.Sub(before.At).Seconds()
	}
	if before.ContextSwitches > 0 && after.ContextSwitches > 0 {
		d.ContextSwitches = sub(after.ContextSwitches, before.ContextSwitches)
	}
	d.NICInterrupts = nicInterrupts(before.IRQs, after.IRQs, after.NetDev)
}

// nicInterrupts sums each NIC's queue rows' growth per CPU, most first. A
// row is a NIC's when sysfs ties it to one, or when it is named after one of
// the host's devices ("eth0-rx-0"); a row of neither (a virtio queue sysfs
// did not name) is left out rather than guessed. Rows are matched by IRQ
// number and name, so a number reused by another device counts from zero.
func nicInterrupts(before, after []facts.IRQ, devs []facts.NetDev) []NICInterrupts {
	prev := map[string]facts.IRQ{}
	for _, q := range before {
		prev[q.IRQ] = q
	}
	byDev := map[string]*NICInterrupts{}
	for _, q := range after {
		dev := irqDevice(q, devs)
		if dev == "" {
			continue
		}
		p, ok := prev[q.IRQ]
		if !ok || p.Name != q.Name {
			continue // appeared during the run: its counts may predate it
		}
		n := byDev[dev]
		if n == nil {
			n = &NICInterrupts{Device: dev}
			byDev[dev] = n
		}
		for c, v := range q.PerCPU {
			if c >= len(n.PerCPU) {
				n.PerCPU = append(n.PerCPU, make([]uint64, c+1-len(n.PerCPU))...)
			}
			var was uint64
			if c < len(p.PerCPU) {
				was = p.PerCPU[c]
			}
			n.PerCPU[c] += sub(v, was)
			n.Total += sub(v, was)
		}
	}
	var out []NICInterrupts
	for _, n := range byDev {
		if n.Total > 0 {
			out = append(out, *n)
		}
	}
	slices.SortFunc(out, func(a, b NICInterrupts) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Device, b.Device))
	})
	return out
}

// irqDevice names the NIC an interrupt serves: sysfs's label, or the device
// its name starts with ("eth0", "eth0-TxRx-3", "eth0@pci:..."), "" for none.
func irqDevice(q facts.IRQ, devs []facts.NetDev) string {
	if q.Device != "" {
		return q.Device
	}
	for _, n := range devs {
		if n.Name != "lo" && (q.Name == n.Name || strings.HasPrefix(q.Name, n.Name+"-") || strings.HasPrefix(q.Name, n.Name+"@")) {
			return n.Name
		}
	}
	return ""
}
