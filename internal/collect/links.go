package collect

import (
	"bufio"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// linkSource is the network devices: ip link, their offloads (ethtool -k),
// RPS masks and bonding from sysfs, and their interrupts.
var linkSource = source{
	batch: networkBatch,
	files: []string{"/proc/interrupts"},
	// Expanded by the target's shell; a glob that matches nothing stays
	// literal and grep reports it missing, which is fine.
	globs: []string{
		"/sys/class/net/*/queues/rx-*/rps_cpus",
		"/sys/class/net/*/bonding/mode",
		"/sys/class/net/*/bonding/xmit_hash_policy",
		"/sys/class/net/*/bonding/slaves",
		// The interrupts each NIC's PCI function owns; a virtio NIC's are
		// its parent's (device is the virtio device, ".." the PCI one).
		"/sys/class/net/*/device/msi_irqs/*",
		"/sys/class/net/*/device/../msi_irqs/*",
	},
	cmds: []shellCmd{
		// -s -s: the counters with the kernel's error breakdown (kernel
		// WireGuard's own rejects are counted there and nowhere else).
		{"link", parse.IPJSONOr("ip -s -s -j -d link show", "ip -o link show")},
		// tc sets every shaper, so a host without it has none to read.
		{"qdisc", "if command -v tc >/dev/null 2>&1; then tc -j qdisc show; else skip; fi"},
		{"htb", "if command -v tc >/dev/null 2>&1; then " + htbClasses + "; else skip; fi"},
		{"ethtool", ifInstalled("ethtool", `for d in /sys/class/net/*; do d=${d##*/}; [ "$d" = lo ] && continue; printf '@@dev %s\n' "$d"; ethtool -k "$d" 2>/dev/null; done; true`)},
	},
	assemble: (*collector).links,
}

// htbClasses prints the classes of each device whose root is htb, where its
// rate lives, under "@@dev NAME" (tc prints them as text even with -j).
const htbClasses = `for d in $(tc qdisc show | sed -n 's/^qdisc htb [^ ]* dev \([^ ]*\) root.*/\1/p'); do printf '@@dev %s\n' "$d"; tc class show dev "$d"; done; true`

func (c *collector) links(files map[string]*fileRead) {
	if out, ok := c.output("link", "ip link"); ok {
		links, err := parseIPOutput(c, out, parse.ParseIPLink, parse.ParseIPLinkText)
		if err != nil {
			c.note("ip link", err.Error())
		} else {
			c.snap.Links = links
		}
	}
	byName := map[string]*facts.Link{}
	names := []string{}
	for i := range c.snap.Links {
		byName[c.snap.Links[i].Name] = &c.snap.Links[i]
		names = append(names, c.snap.Links[i].Name)
	}
	if out, ok := c.output("ethtool", "ethtool -k"); ok {
		for dev, text := range splitDevSections(out) {
			l := byName[dev]
			if l == nil || text == "" {
				continue
			}
			if off, err := parse.ParseEthtoolFeatures(strings.NewReader(text)); err != nil {
				c.note("ethtool -k "+dev, err.Error())
			} else if len(off) > 0 {
				l.Offloads = off
			}
		}
	}
	c.shapers(byName)
	for name, f := range files {
		if f.Err != "" || !strings.HasPrefix(name, "/sys/class/net/") {
			continue
		}
		// /sys/class/net/DEV/queues/rx-N/rps_cpus or /sys/class/net/DEV/bonding/OPTION
		parts := strings.Split(strings.TrimPrefix(name, "/sys/class/net/"), "/")
		l := byName[parts[0]]
		if l == nil || len(parts) < 3 {
			continue
		}
		value := strings.TrimSpace(f.Content)
		switch {
		case parts[1] == "queues" && len(parts) == 4 && parts[3] == "rps_cpus":
			if l.RPSCPUs == nil {
				l.RPSCPUs = map[string]string{}
			}
			l.RPSCPUs[parts[2]] = value
		case parts[1] == "bonding":
			if l.Bond == nil {
				l.Bond = &facts.Bond{Slaves: []string{}}
			}
			// sysfs prints "802.3ad 4" and "layer2 0": the name, then the number.
			word, _, _ := strings.Cut(value, " ")
			switch parts[2] {
			case "mode":
				l.Bond.Mode = word
			case "xmit_hash_policy":
				l.Bond.XmitHashPolicy = word
			case "slaves":
				if len(l.Bond.Slaves) == 0 {
					l.Bond.Slaves = strings.Fields(value)
				}
			}
		}
	}
	if v, ok := c.file(files, "/proc/interrupts", false); ok {
		irqs, err := parse.ParseInterrupts(strings.NewReader(v), names)
		if err != nil {
			c.note("/proc/interrupts", err.Error())
		} else {
			c.snap.IRQs = irqs
			labelIRQDevices(c.snap.IRQs, files)
		}
	}
}

// splitDevSections splits "@@dev NAME" sections of the ethtool loop.
func splitDevSections(out string) map[string]string {
	res := map[string]string{}
	var dev string
	var b strings.Builder
	flush := func() {
		if dev != "" {
			res[dev] = b.String()
		}
		b.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "@@dev "); ok {
			flush()
			dev = name
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	flush()
	return res
}

// shapers puts each device's root rate limit on its link.
func (c *collector) shapers(byName map[string]*facts.Link) {
	out, ok := c.output("qdisc", "tc -j qdisc show")
	if !ok {
		return
	}
	shapers, err := parse.ParseTCQdisc(strings.NewReader(out))
	if err != nil {
		c.note("tc qdisc", err.Error())
		return
	}
	classes := map[string]string{}
	if out, ok := c.output("htb", "tc class show"); ok {
		classes = splitDevSections(out)
	}
	for dev, sh := range shapers {
		l := byName[dev]
		if l == nil {
			continue
		}
		if sh.Qdisc == "htb" {
			var ok bool
			var err error
			if sh, ok, err = parse.ParseTCClassHTB(strings.NewReader(classes[dev])); err != nil {
				c.note("tc class show dev "+dev, err.Error())
			}
			if !ok {
				continue
			}
		}
		l.Shaper = &sh
	}
}
