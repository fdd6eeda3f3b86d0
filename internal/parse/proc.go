package parse

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/wgperf/wgperf/internal/facts"
)

// ParseSNMP parses /proc/net/snmp or /proc/net/netstat: pairs of lines, a header
// "Proto: Name1 Name2..." followed by "Proto: value1 value2...". The result is
// indexed as m["Udp"]["RcvbufErrors"].
func ParseSNMP(r io.Reader) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		header := sc.Text()
		if strings.TrimSpace(header) == "" {
			continue
		}
		proto, names, ok := strings.Cut(header, ":")
		if !ok {
			return nil, fmt.Errorf("snmp line %d: no \"Proto:\" prefix", line)
		}
		if !sc.Scan() {
			return nil, fmt.Errorf("snmp line %d: %s header without a value line", line, proto)
		}
		line++
		vproto, values, ok := strings.Cut(sc.Text(), ":")
		if !ok || vproto != proto {
			return nil, fmt.Errorf("snmp line %d: want values for %s, got %q", line, proto, vproto)
		}
		keys, vals := strings.Fields(names), strings.Fields(values)
		if len(keys) != len(vals) {
			return nil, fmt.Errorf("snmp line %d: %s has %d names but %d values", line, proto, len(keys), len(vals))
		}
		m := out[proto]
		if m == nil {
			m = make(map[string]int64, len(keys))
			out[proto] = m
		}
		for i, k := range keys {
			v, err := strconv.ParseInt(vals[i], 10, 64)
			if err != nil {
				// Counters are unsigned in the kernel; a 64-bit one past MaxInt64 saturates.
				if _, uerr := strconv.ParseUint(vals[i], 10, 64); uerr != nil {
					return nil, fmt.Errorf("snmp line %d: %s %s: bad value %q", line, proto, k, vals[i])
				}
				v = math.MaxInt64
			}
			m[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("snmp: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("snmp: no counters found")
	}
	return out, nil
}

// ParseSoftnet parses /proc/net/softnet_stat: one row of hex columns per online
// CPU. The CPU number is column 13 when the kernel prints it (5.10+); older
// kernels skip offline CPUs without saying so, and the row number is the best guess.
func ParseSoftnet(r io.Reader) ([]facts.SoftnetCPU, error) {
	var out []facts.SoftnetCPU
	sc := bufio.NewScanner(r)
	row := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("softnet_stat row %d: %d columns, want at least 3", row+1, len(f))
		}
		col := make([]uint64, len(f))
		for i, s := range f {
			v, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("softnet_stat row %d column %d: bad hex %q", row+1, i+1, s)
			}
			col[i] = v
		}
		c := facts.SoftnetCPU{CPU: row, Processed: col[0], Dropped: col[1], TimeSqueeze: col[2]}
		if len(col) > 9 {
			c.ReceivedRPS = col[9]
		}
		if len(col) > 12 {
			c.CPU = int(col[12])
		}
		out = append(out, c)
		row++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("softnet_stat: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("softnet_stat: no rows")
	}
	return out, nil
}

// ParseProcStat parses the cpu lines of /proc/stat: the aggregate "cpu" line
// first, then "cpu0", "cpu1"... Other lines are ignored.
func ParseProcStat(r io.Reader) ([]facts.CPUTimes, error) {
	var out []facts.CPUTimes
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("/proc/stat %s: %d fields, want at least 4 times", f[0], len(f)-1)
		}
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/stat %s: bad number %q", f[0], f[i+1])
			}
			v[i] = n
		}
		out = append(out, facts.CPUTimes{CPU: f[0], User: v[0], Nice: v[1], System: v[2], Idle: v[3],
			IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/stat: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return out, nil
}

// ParseNetDev parses /proc/net/dev: two header lines that name the receive and
// transmit columns, then "name: rx... tx..." per interface. Columns are found
// by their header names (as node_exporter does), so a kernel that adds one
// does not shift the others; a row that does not fit the header is an error.
func ParseNetDev(r io.Reader) ([]facts.NetDev, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for range 2 { // "Inter-|   Receive  |  Transmit", then the column names
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("/proc/net/dev: %w", err)
			}
			return nil, fmt.Errorf("/proc/net/dev: no header")
		}
	}
	rx, tx, err := netDevColumns(sc.Text())
	if err != nil {
		return nil, err
	}
	var out []facts.NetDev
	seen := map[string]bool{}
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		d, err := netDevRow(sc.Text(), rx, tx)
		if err != nil {
			return nil, err
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("/proc/net/dev: %q listed twice", d.Name)
		}
		seen[d.Name] = true
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/net/dev: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/net/dev: no interfaces")
	}
	return out, nil
}

// netDevWanted are the columns NetDev keeps, on both the receive and the transmit side.
var netDevWanted = []string{"bytes", "packets", "errs", "drop"}

// netDevColumns reads the second header line, " face |bytes packets ...|bytes
// packets ...", into the receive and transmit column names.
func netDevColumns(header string) (rx, tx []string, err error) {
	parts := strings.Split(header, "|")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("/proc/net/dev: header %q is not \"face |receive|transmit\"", header)
	}
	rx, tx = strings.Fields(parts[1]), strings.Fields(parts[2])
	for _, side := range [][]string{rx, tx} {
		for _, w := range netDevWanted {
			if !slices.Contains(side, w) {
				return nil, nil, fmt.Errorf("/proc/net/dev: header %q lacks column %q", header, w)
			}
		}
	}
	return rx, tx, nil
}

// netDevRow parses "  eth0: 1032 10 0 ...". A long name runs into its first
// number ("wg-site-a:123456789"): the name ends at the colon, not at a space.
func netDevRow(line string, rx, tx []string) (facts.NetDev, error) {
	name, rest, ok := strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return facts.NetDev{}, fmt.Errorf("/proc/net/dev: row %q has no \"name:\"", line)
	}
	if strings.ContainsFunc(name, unicode.IsSpace) {
		// The kernel refuses such names: this is not a row of /proc/net/dev.
		return facts.NetDev{}, fmt.Errorf("/proc/net/dev: interface name %q holds a space", name)
	}
	f := strings.Fields(rest)
	if len(f) != len(rx)+len(tx) {
		return facts.NetDev{}, fmt.Errorf("/proc/net/dev: %q has %d values, the header names %d", name, len(f), len(rx)+len(tx))
	}
	v := map[string]uint64{}
	for i, s := range f {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return facts.NetDev{}, fmt.Errorf("/proc/net/dev: %q: bad number %q", name, s)
		}
		if i < len(rx) {
			v["rx "+rx[i]] = n
		} else {
			v["tx "+tx[i-len(rx)]] = n
		}
	}
	return facts.NetDev{Name: name,
		RxBytes: v["rx bytes"], RxPackets: v["rx packets"], RxErrors: v["rx errs"], RxDropped: v["rx drop"], RxFrame: v["rx frame"],
		TxBytes: v["tx bytes"], TxPackets: v["tx packets"], TxErrors: v["tx errs"], TxDropped: v["tx drop"]}, nil
}

// ParseProcNetUDP parses /proc/net/udp or /proc/net/udp6 (family "inet" or
// "inet6"): one bound socket a row, columns found by the header's names
// (local_address, rx_queue, inode, drops). The local address's port is
// printed in host order whatever the machine; the address itself in the
// machine's byte order, which the text does not say, so only the port is kept.
func ParseProcNetUDP(r io.Reader, family string) ([]facts.UDPSocket, error) {
	name := "/proc/net/udp"
	if family == "inet6" {
		name += "6"
	}
	sc, err := procNetTable(r, name)
	if err != nil {
		return nil, err
	}
	// "sl local_address rem_address st tx_queue rx_queue tr tm->when ..." names
	// tx_queue and rx_queue apart; rows print them as one "tx:rx" field, and
	// "tr tm->when" likewise as one: map header words to row fields.
	col := map[string]int{}
	field := 0
	for _, w := range strings.Fields(sc.Text()) {
		switch w {
		case "rx_queue", "tm->when":
			col[w] = field - 1 // printed together with the word before it
			continue
		}
		col[w] = field
		field++
	}
	for _, w := range []string{"local_address", "rx_queue", "inode", "drops"} {
		if _, ok := col[w]; !ok {
			return nil, fmt.Errorf("%s: header %q lacks %q", name, sc.Text(), w)
		}
	}
	out := []facts.UDPSocket{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != field {
			return nil, fmt.Errorf("%s: row %q has %d fields, the header names %d", name, sc.Text(), len(f), field)
		}
		_, port, ok := strings.Cut(f[col["local_address"]], ":")
		p, err := strconv.ParseUint(port, 16, 16)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: local address %q", name, f[col["local_address"]])
		}
		_, rxq, _ := strings.Cut(f[col["rx_queue"]], ":")
		queued, err1 := strconv.ParseUint(rxq, 16, 64)
		inode, err2 := strconv.ParseUint(f[col["inode"]], 10, 64)
		drops, err3 := strconv.ParseUint(f[col["drops"]], 10, 64)
		// The first bad number only: an error is one line.
		if err := cmp.Or(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%s: row %q: %w", name, sc.Text(), err)
		}
		out = append(out, facts.UDPSocket{Family: family, LocalPort: int(p), RxQueue: queued, Drops: drops, Inode: inode})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
