package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// IRQDeviceGlobs are the sysfs files that tie interrupts to network devices:
// what LabelIRQs reads, for ReadSample to expand.
var IRQDeviceGlobs = []string{"/sys/class/net/*/device/msi_irqs/*", "/sys/class/net/*/device/../msi_irqs/*"}

// LabelIRQs names the network device of each interrupt from the files of
// IRQDeviceGlobs that ReadSample read (path → contents), as Collect does.
func LabelIRQs(irqs []facts.IRQ, files map[string][]byte) {
	read := map[string]*fileRead{}
	for path, b := range files {
		read[path] = &fileRead{Content: string(b)}
	}
	labelIRQDevices(irqs, read)
}

// labelIRQDevices names the network device of each interrupt from the
// msi_irqs files grep read: /sys/class/net/DEV/device/msi_irqs/N, or for a
// device whose own has none (virtio), /sys/class/net/DEV/device/../msi_irqs/N.
// The device's own list wins over its parent's.
func labelIRQDevices(irqs []facts.IRQ, files map[string]*fileRead) {
	own, parent := map[string]string{}, map[string]string{}
	for name, f := range files {
		rest, ok := strings.CutPrefix(name, "/sys/class/net/")
		if !ok || f.Err != "" {
			continue
		}
		dev, tail, _ := strings.Cut(rest, "/")
		i := strings.LastIndexByte(tail, '/')
		if i < 0 {
			continue
		}
		irq := tail[i+1:]
		switch tail[:i] { // not path.Dir: it would clean ".." away
		case "device/msi_irqs":
			own[irq] = dev
		case "device/../msi_irqs":
			parent[irq] = dev
		}
	}
	for i := range irqs {
		if dev, ok := own[irqs[i].IRQ]; ok {
			irqs[i].Device = dev
		} else if dev, ok := parent[irqs[i].IRQ]; ok {
			irqs[i].Device = dev
		}
	}
}
