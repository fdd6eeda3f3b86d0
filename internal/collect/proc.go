package collect

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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
