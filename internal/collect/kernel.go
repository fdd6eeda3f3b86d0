package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/parse"
)

// kernelSource is the kernel's packet counters: SNMP and netstat, softnet per
// CPU and the CPU times.
var kernelSource = source{
	files:    []string{"/proc/net/snmp", "/proc/net/netstat", "/proc/net/softnet_stat", "/proc/stat"},
	assemble: (*collector).kernelCounters,
}

func (c *collector) kernelCounters(files map[string]*fileRead) {
	var err error
	if v, ok := c.file(files, "/proc/net/snmp", false); ok {
		if c.snap.Counters.SNMP, err = parse.ParseSNMP(strings.NewReader(v)); err != nil {
			c.note("/proc/net/snmp", err.Error())
		}
	}
	if v, ok := c.file(files, "/proc/net/netstat", false); ok {
		if c.snap.Counters.Netstat, err = parse.ParseSNMP(strings.NewReader(v)); err != nil {
			c.note("/proc/net/netstat", err.Error())
		}
	}
	if v, ok := c.file(files, "/proc/net/softnet_stat", false); ok {
		if rows, err := parse.ParseSoftnet(strings.NewReader(v)); err != nil {
			c.note("/proc/net/softnet_stat", err.Error())
		} else {
			c.snap.Softnet = rows
		}
	}
	if v, ok := c.file(files, "/proc/stat", false); ok {
		if cpus, err := parse.ParseProcStat(strings.NewReader(v)); err != nil {
			c.note("/proc/stat", err.Error())
		} else {
			// The aggregate "cpu" line is kept first; the CPU count excludes it.
			c.snap.CPU = cpus
			for _, cpu := range cpus {
				if cpu.CPU != "cpu" {
					c.snap.System.CPUs++
				}
			}
		}
	}
}
