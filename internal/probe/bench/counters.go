package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Sample is a host's drop and load counters at one moment.
type Sample struct {
	SNMP    map[string]map[string]int64
	Softnet []facts.SoftnetCPU
	CPU     []facts.CPUTimes
	NetDev  []facts.NetDev
	// Firewall is nil when neither nft nor iptables answered.
	Firewall *facts.Firewall
}

// Which sample of a run TakeSample takes: the one before a run is only
// compared with the one after it, which names the firewall rules that grew.
const (
	Baseline = false // counters only
	Named    = true  // counters and the firewall rules' texts
)

// TakeSample reads /proc/net/snmp, /proc/net/softnet_stat, /proc/stat,
// /proc/net/dev and the firewall's counters on t, with the rules' texts when
// named (Named, for the sample after a run). A source that cannot be read
// leaves its part empty: counters are evidence, not a reason to abort a
// measurement.
func TakeSample(ctx context.Context, t target.Target, named bool) Sample {
	var s Sample
	if b, err := t.ReadFile(ctx, "/proc/net/snmp"); err == nil {
		s.SNMP, _ = parse.ParseSNMP(bytes.NewReader(b))
	}
	if b, err := t.ReadFile(ctx, "/proc/net/softnet_stat"); err == nil {
		s.Softnet, _ = parse.ParseSoftnet(bytes.NewReader(b))
	}
	if b, err := t.ReadFile(ctx, "/proc/stat"); err == nil {
		s.CPU, _ = parse.ParseProcStat(bytes.NewReader(b))
	}
	if b, err := t.ReadFile(ctx, "/proc/net/dev"); err == nil {
		s.NetDev, _ = parse.ParseNetDev(bytes.NewReader(b))
	}
	if named {
		s.Firewall, _ = collect.ReadFirewall(ctx, t)
	} else {
		s.Firewall, _ = collect.ReadFirewallCounters(ctx, t)
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
	SoftnetDropped  uint64    `json:"softnet_dropped"`  // all CPUs
	TimeSqueeze     uint64    `json:"time_squeeze"`     // all CPUs
	CPUBusy         []float64 `json:"cpu_busy_percent"` // per CPU, in order of /proc/stat
	// SoftnetCPUs are the CPUs whose backlog dropped or whose softirq ran
	// out of budget: one busy CPU among idle ones points at RPS or IRQ spreading.
	SoftnetCPUs []SoftnetGrowth `json:"softnet_per_cpu"`
	// Interfaces are those whose drop or error counters grew (/proc/net/dev).
	Interfaces []InterfaceGrowth `json:"interface_drops"`
	// Firewall are the drop and reject rules and drop policies whose counters grew.
	Firewall []firewall.FirewallGrowth `json:"firewall_drops"`
}

// SoftnetGrowth is what one CPU's softnet counters did during a run.
type SoftnetGrowth struct {
	CPU         int    `json:"cpu"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
}

// InterfaceGrowth is how much an interface dropped and got wrong during a run.
type InterfaceGrowth struct {
	Interface string `json:"interface"`
	RxDropped uint64 `json:"rx_dropped"`
	TxDropped uint64 `json:"tx_dropped"`
	RxErrors  uint64 `json:"rx_errors"`
	TxErrors  uint64 `json:"tx_errors"`
}

// MarshalJSON writes empty lists as [], never null.
func (d HostDelta) MarshalJSON() ([]byte, error) {
	type plain HostDelta
	p := plain(d)
	if p.CPUBusy == nil {
		p.CPUBusy = []float64{}
	}
	if p.SoftnetCPUs == nil {
		p.SoftnetCPUs = []SoftnetGrowth{}
	}
	if p.Interfaces == nil {
		p.Interfaces = []InterfaceGrowth{}
	}
	if p.Firewall == nil {
		p.Firewall = []firewall.FirewallGrowth{}
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
	d.softnet(before.Softnet, after.Softnet)
	d.Interfaces = interfaceGrowth(before.NetDev, after.NetDev)
	if before.Firewall != nil && after.Firewall != nil {
		for _, g := range firewall.FirewallGrown(*before.Firewall, *after.Firewall) {
			if g.Drops() {
				d.Firewall = append(d.Firewall, g)
			}
		}
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

// softnet sums the CPUs' softnet growth and lists the CPUs where it grew.
func (d *HostDelta) softnet(before, after []facts.SoftnetCPU) {
	prev := map[int]facts.SoftnetCPU{}
	for _, c := range before {
		prev[c.CPU] = c
	}
	for _, c := range after {
		p := prev[c.CPU]
		g := SoftnetGrowth{CPU: c.CPU, Dropped: sub(c.Dropped, p.Dropped), TimeSqueeze: sub(c.TimeSqueeze, p.TimeSqueeze)}
		d.SoftnetDropped += g.Dropped
		d.TimeSqueeze += g.TimeSqueeze
		if g.Dropped > 0 || g.TimeSqueeze > 0 {
			d.SoftnetCPUs = append(d.SoftnetCPUs, g)
		}
	}
}

// interfaceGrowth lists the interfaces whose drop or error counters grew. An
// interface that appeared during the run is left out: its counters may
// predate the run (a namespace moved in, a renamed link).
func interfaceGrowth(before, after []facts.NetDev) []InterfaceGrowth {
	prev := map[string]facts.NetDev{}
	for _, n := range before {
		prev[n.Name] = n
	}
	var out []InterfaceGrowth
	for _, n := range after {
		p, ok := prev[n.Name]
		if !ok {
			continue
		}
		g := InterfaceGrowth{Interface: n.Name, RxDropped: sub(n.RxDropped, p.RxDropped), TxDropped: sub(n.TxDropped, p.TxDropped),
			RxErrors: sub(n.RxErrors, p.RxErrors), TxErrors: sub(n.TxErrors, p.TxErrors)}
		if g != (InterfaceGrowth{Interface: n.Name}) {
			out = append(out, g)
		}
	}
	return out
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

// Attribution says in words what the counters show, a line per counter
// that grew, e.g. "receiver (netns:b) dropped 9,312 UDP datagrams: receive
// buffer full (Udp RcvbufErrors)", so a drop is pinned to the layer where it
// happened: socket, backlog (per CPU), interface, firewall. Interface names
// and rule texts come from the host: they are shown on one line with control
// characters escaped (shell.Comment). It is empty when nothing was dropped.
func (d HostDelta) Attribution(role string) []string {
	who := fmt.Sprintf("%s (%s)", role, d.Host)
	var out []string
	if d.UDPRcvbufErrors > 0 {
		out = append(out, fmt.Sprintf("%s dropped %s UDP datagrams: receive buffer full (Udp RcvbufErrors)", who, commas(d.UDPRcvbufErrors)))
	}
	if d.UDPSndbufErrors > 0 {
		out = append(out, fmt.Sprintf("%s dropped %s UDP datagrams: send buffer full (Udp SndbufErrors)", who, commas(d.UDPSndbufErrors)))
	}
	out = append(out, d.softnetLines(who)...)
	for _, n := range d.Interfaces {
		out = append(out, interfaceLines(who, n)...)
	}
	for _, g := range d.Firewall {
		out = append(out, fmt.Sprintf("%s dropped %s packets in the firewall: %s", who, commas(int64(g.Packets)), shell.Comment(g.String())))
	}
	if b, cpu := d.MaxCPU(); b >= CPUSaturatedPercent {
		out = append(out, fmt.Sprintf("%s had CPU %d at %.0f%% busy", who, cpu, b))
	}
	return out
}

// softnetLines names each CPU whose backlog dropped or whose softirq ran out
// of budget; a delta without them (a report from before they were kept)
// says the total.
func (d HostDelta) softnetLines(who string) []string {
	var out []string
	if len(d.SoftnetCPUs) == 0 && d.SoftnetDropped > 0 {
		out = append(out, fmt.Sprintf("%s dropped %s packets: backlog full (softnet dropped)", who, commas(int64(d.SoftnetDropped))))
	}
	for _, c := range d.SoftnetCPUs {
		if c.Dropped > 0 {
			out = append(out, fmt.Sprintf("%s dropped %s packets on CPU %d: backlog full (softnet dropped)", who, commas(int64(c.Dropped)), c.CPU))
		}
		if c.TimeSqueeze > 0 {
			out = append(out, fmt.Sprintf("%s ran out of softirq budget %s times on CPU %d (softnet time_squeeze)", who, commas(int64(c.TimeSqueeze)), c.CPU))
		}
	}
	return out
}

// interfaceLines says what one interface dropped or got wrong, a line per counter.
func interfaceLines(who string, n InterfaceGrowth) []string {
	name := shell.Comment(shell.Quote(n.Interface))
	var out []string
	for _, c := range []struct {
		n    uint64
		what string
	}{
		{n.RxDropped, "dropped %s received packets at interface %s (rx drop)"},
		{n.TxDropped, "dropped %s outgoing packets at interface %s (tx drop)"},
		{n.RxErrors, "had %s receive errors at interface %s"},
		{n.TxErrors, "had %s transmit errors at interface %s"},
	} {
		if c.n > 0 {
			out = append(out, who+" "+fmt.Sprintf(c.what, commas(int64(c.n)), name))
		}
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
