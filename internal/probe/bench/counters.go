package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
)

// Sample is a host's drop and load counters at one moment.
type Sample struct {
	SNMP    map[string]map[string]int64
	Softnet []facts.SoftnetCPU
	CPU     []facts.CPUTimes
}

// TakeSample reads /proc/net/snmp, /proc/net/softnet_stat and /proc/stat on t.
// A file that cannot be read leaves its part empty: counters are evidence, not
// a reason to abort a measurement.
func TakeSample(ctx context.Context, t target.Target) Sample {
	var s Sample
	if b, err := t.ReadFile(ctx, "/proc/net/snmp"); err == nil {
		s.SNMP, _ = collect.ParseSNMP(bytes.NewReader(b))
	}
	if b, err := t.ReadFile(ctx, "/proc/net/softnet_stat"); err == nil {
		s.Softnet, _ = collect.ParseSoftnet(bytes.NewReader(b))
	}
	if b, err := t.ReadFile(ctx, "/proc/stat"); err == nil {
		s.CPU, _ = collect.ParseProcStat(bytes.NewReader(b))
	}
	return s
}

// HostDelta is what a host's counters did during one run.
type HostDelta struct {
	Host            string    `json:"host"`
	UDPRcvbufErrors int64     `json:"udp_rcvbuf_errors"`
	UDPSndbufErrors int64     `json:"udp_sndbuf_errors"`
	UDPInErrors     int64     `json:"udp_in_errors"`
	TCPRetransSegs  int64     `json:"tcp_retrans_segs"`
	SoftnetDropped  uint64    `json:"softnet_dropped"`
	TimeSqueeze     uint64    `json:"time_squeeze"`
	CPUBusy         []float64 `json:"cpu_busy_percent"` // per CPU, in order of /proc/stat
}

// MarshalJSON writes empty lists as [], never null.
func (d HostDelta) MarshalJSON() ([]byte, error) {
	type plain HostDelta
	p := plain(d)
	if p.CPUBusy == nil {
		p.CPUBusy = []float64{}
	}
	return json.Marshal(p)
}

// MaxCPU is the busiest CPU's load in percent, and its index (-1 when unknown).
func (d HostDelta) MaxCPU() (float64, int) {
	best, at := 0.0, -1
	for i, b := range d.CPUBusy {
		if b > best || at < 0 {
			best, at = b, i
		}
	}
	return best, at
}

// Delta compares two samples of host.
func Delta(host string, before, after Sample) HostDelta {
	d := HostDelta{Host: host}
	snmp := func(group, key string) int64 {
		v := after.SNMP[group][key] - before.SNMP[group][key]
		if v < 0 { // counter reset
			return 0
		}
		return v
	}
	d.UDPRcvbufErrors = snmp("Udp", "RcvbufErrors")
	d.UDPSndbufErrors = snmp("Udp", "SndbufErrors")
	d.UDPInErrors = snmp("Udp", "InErrors")
	d.TCPRetransSegs = snmp("Tcp", "RetransSegs")
	prev := map[int]facts.SoftnetCPU{}
	for _, c := range before.Softnet {
		prev[c.CPU] = c
	}
	for _, c := range after.Softnet {
		p := prev[c.CPU]
		d.SoftnetDropped += sub(c.Dropped, p.Dropped)
		d.TimeSqueeze += sub(c.TimeSqueeze, p.TimeSqueeze)
	}
	cpus := map[string]facts.CPUTimes{}
	for _, c := range before.CPU {
		cpus[c.CPU] = c
	}
	for _, c := range after.CPU {
		p, ok := cpus[c.CPU]
		if !ok || c.CPU == "cpu" { // the aggregate line hides one busy CPU among idle ones
			continue
		}
		busy := sub(busyTicks(c), busyTicks(p))
		total := busy + sub(c.Idle+c.IOWait, p.Idle+p.IOWait)
		if total == 0 {
			d.CPUBusy = append(d.CPUBusy, 0)
			continue
		}
		d.CPUBusy = append(d.CPUBusy, 100*float64(busy)/float64(total))
	}
	return d
}

func busyTicks(c facts.CPUTimes) uint64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// Attribution says in words what the counters show, e.g. "receiver dropped
// 9,312 datagrams: rcvbuf". It is empty when nothing was dropped.
func (d HostDelta) Attribution(role string) []string {
	var out []string
	if d.UDPRcvbufErrors > 0 {
		out = append(out, fmt.Sprintf("%s (%s) dropped %s UDP datagrams: receive buffer full (Udp RcvbufErrors)", role, d.Host, commas(d.UDPRcvbufErrors)))
	}
	if d.UDPSndbufErrors > 0 {
		out = append(out, fmt.Sprintf("%s (%s) dropped %s UDP datagrams: send buffer full (Udp SndbufErrors)", role, d.Host, commas(d.UDPSndbufErrors)))
	}
	if d.SoftnetDropped > 0 {
		out = append(out, fmt.Sprintf("%s (%s) dropped %s packets: backlog full (softnet dropped)", role, d.Host, commas(int64(d.SoftnetDropped))))
	}
	if b, cpu := d.MaxCPU(); b >= CPUSaturatedPercent {
		out = append(out, fmt.Sprintf("%s (%s) had CPU %d at %.0f%% busy", role, d.Host, cpu, b))
	}
	return out
}

// commas renders 9312 as "9,312".
func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
