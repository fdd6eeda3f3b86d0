package parse

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/shell"
)

// netIRQ matches /proc/interrupts names of network queues: "eth0-rx-0",
// "virtio2-input.0", "mlx5_comp3@pci:...", "iwlwifi", "enp3s0f0-TxRx-1".
var netIRQ = regexp.MustCompile(`(?i)(-rx|-tx|txrx|-input\.|-output\.|mlx\d_comp|iwlwifi|ath\d|mt76|ethernet|-fp-\d)`)

// ParseInterrupts parses /proc/interrupts and keeps the rows that serve
// network devices: those whose name mentions one of devices, or looks like a
// NIC queue. devices may be empty.
func ParseInterrupts(r io.Reader, devices []string) ([]facts.IRQ, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("/proc/interrupts: empty")
	}
	ncpu := len(strings.Fields(sc.Text()))
	if ncpu == 0 || !strings.HasPrefix(strings.Fields(sc.Text())[0], "CPU") {
		return nil, fmt.Errorf("/proc/interrupts: no CPU header")
	}
	out := []facts.IRQ{}
	for sc.Scan() {
		irq, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) <= ncpu {
			continue // ERR:, MIS: and friends have one count and no name
		}
		counts := make([]uint64, ncpu)
		numeric := true
		for i := range ncpu {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				numeric = false
				break
			}
			counts[i] = n
		}
		if !numeric {
			continue
		}
		name := f[len(f)-1]
		if !isNetIRQ(name, devices) {
			continue
		}
		out = append(out, facts.IRQ{IRQ: strings.TrimSpace(irq), Name: name, PerCPU: counts})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/interrupts: %w", err)
	}
	return out, nil
}

func isNetIRQ(name string, devices []string) bool {
	for _, d := range devices {
		if d != "" && d != "lo" && (name == d || strings.HasPrefix(name, d+"-") || strings.HasPrefix(name, d+"@")) {
			return true
		}
	}
	return netIRQ.MatchString(name)
}

// ParseConntrackStat parses /proc/net/stat/nf_conntrack (a header, then one row
// of hex counters per CPU) and sums the rows.
func ParseConntrackStat(r io.Reader) (facts.Conntrack, error) {
	var c facts.Conntrack
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		return c, fmt.Errorf("nf_conntrack stat: empty")
	}
	header := strings.Fields(sc.Text())
	rows := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != len(header) {
			return c, fmt.Errorf("nf_conntrack stat: row has %d columns, header %d", len(f), len(header))
		}
		for i, h := range header {
			v, err := strconv.ParseUint(f[i], 16, 64)
			if err != nil {
				return c, fmt.Errorf("nf_conntrack stat: %s: bad hex %q", h, f[i])
			}
			addConntrack(&c, h, v)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("nf_conntrack stat: %w", err)
	}
	if rows == 0 {
		return c, fmt.Errorf("nf_conntrack stat: no rows")
	}
	return c, nil
}

// ParseConntrackS parses "conntrack -S": one "cpu=N key=value..." line per CPU,
// summed.
func ParseConntrackS(r io.Reader) (facts.Conntrack, error) {
	var c facts.Conntrack
	sc := bufio.NewScanner(r)
	rows := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu=") {
			continue
		}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return c, fmt.Errorf("conntrack -S: bad field %q", kv)
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return c, fmt.Errorf("conntrack -S: %s: bad number %q", k, v)
			}
			addConntrack(&c, k, n)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("conntrack -S: %w", err)
	}
	if rows == 0 {
		return c, fmt.Errorf("conntrack -S: no cpu lines")
	}
	return c, nil
}

func addConntrack(c *facts.Conntrack, key string, v uint64) {
	switch key {
	case "insert_failed":
		c.InsertFailed += v
	case "drop":
		c.Drop += v
	case "early_drop":
		c.EarlyDrop += v
	case "invalid":
		c.Invalid += v
	}
}

// ParseOSRelease returns PRETTY_NAME from /etc/os-release, or DISTRIB_DESCRIPTION
// from /etc/openwrt_release.
func ParseOSRelease(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || (k != "PRETTY_NAME" && k != "DISTRIB_DESCRIPTION") {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `'"`)
		}
		// Unquoting can make "\n" a newline: keep the name on one line.
		return shell.Comment(v), nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("os-release: no PRETTY_NAME or DISTRIB_DESCRIPTION")
}
