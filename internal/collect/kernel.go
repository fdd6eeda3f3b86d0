package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/parse"
)

// kernelSource is the kernel's packet counters: SNMP and netstat, softnet per
// CPU, the CPU times, and the UDP sockets with their drops.
var kernelSource = source{
	files:    []string{"/proc/net/snmp", "/proc/net/netstat", "/proc/net/softnet_stat", "/proc/stat", "/proc/net/udp", "/proc/net/udp6"},
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
	for _, f := range []struct{ path, family string }{{"/proc/net/udp", "inet"}, {"/proc/net/udp6", "inet6"}} {
		// A kernel without IPv6 has no udp6: not worth a note.
		if v, ok := c.file(files, f.path, f.family == "inet6"); ok {
			if socks, err := parse.ParseProcNetUDP(strings.NewReader(v), f.family); err != nil {
				c.note(f.path, err.Error())
			} else {
				c.snap.UDPSockets = append(c.snap.UDPSockets, socks...)
			}
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
