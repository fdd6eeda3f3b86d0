package exporter

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The exporter process's own metrics, under the names Prometheus' client
// libraries use (process_*, go_*), read from /proc/self at scrape time. A
// value that cannot be read is left out.
var (
	descProcCPU     = newDesc("process_cpu_seconds_total", "User and system CPU time the process has used, in seconds.")
	descProcRSS     = newDesc("process_resident_memory_bytes", "Resident memory of the process, in bytes.")
	descProcVirtual = newDesc("process_virtual_memory_bytes", "Virtual memory size of the process, in bytes.")
	descProcStart   = newDesc("process_start_time_seconds", "Unix time the process started.")
	descProcOpenFDs = newDesc("process_open_fds", "File descriptors the process has open.")
	descProcMaxFDs  = newDesc("process_max_fds", "The process's limit of open file descriptors (soft limit).")
	descGoroutines  = newDesc("go_goroutines", "Goroutines that currently exist.")
	descGoHeapAlloc = newDesc("go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.")
	descGoSys       = newDesc("go_memstats_sys_bytes", "Bytes of memory the Go runtime obtained from the system.")
	descGoInfo      = newDesc("go_info", "The Go version the binary was built with (always 1).", "version")

	// bootTime is read once: the boot time does not change.
	bootTime = sync.OnceValues(readBootTime)
)

// userHZ is the unit of /proc's CPU times: 100 on every Linux ABI.
const userHZ = 100.0

// processMetrics reads the process's CPU time, memory, file descriptors and
// start time, and the Go runtime's goroutines and heap.
func processMetrics() []metric {
	var out []metric
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		out = append(out, parseSelfStat(string(b))...)
	}
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err == nil {
			out = append(out, constMetric(descProcOpenFDs, gauge, float64(len(names)-1))) // less the one reading it
		}
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		out = append(out, constMetric(descProcMaxFDs, gauge, float64(lim.Cur)))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return append(out,
		constMetric(descGoroutines, gauge, float64(runtime.NumGoroutine())),
		constMetric(descGoHeapAlloc, gauge, float64(ms.HeapAlloc)),
		constMetric(descGoSys, gauge, float64(ms.Sys)),
		constMetric(descGoInfo, gauge, 1, runtime.Version()))
}

// parseSelfStat reads /proc/self/stat: utime (14), stime (15), starttime
// (22), vsize (23) and rss (24), counted after the command name in
// parentheses, which may itself hold spaces and parentheses.
func parseSelfStat(s string) []metric {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 22 {
		return nil
	}
	num := func(field int) float64 {
		v, _ := strconv.ParseFloat(f[field-3], 64)
		return v
	}
	out := []metric{
		constMetric(descProcCPU, counter, (num(14)+num(15))/userHZ),
		constMetric(descProcVirtual, gauge, num(23)),
		constMetric(descProcRSS, gauge, num(24)*float64(os.Getpagesize())),
	}
	if boot, ok := bootTime(); ok {
		out = append(out, constMetric(descProcStart, gauge, boot+num(22)/userHZ))
	}
	return out
}

// readBootTime is /proc/stat's btime, the Unix time the system booted.
func readBootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}
