package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Sample is a host's drop and load counters at one moment.
type Sample struct {
	// SNMP are /proc/net/snmp's and /proc/net/netstat's counters by group
	// ("Udp", "Tcp", "TcpExt": the names do not collide).
	SNMP    map[string]map[string]int64
	Softnet []facts.SoftnetCPU
	CPU     []facts.CPUTimes
	NetDev  []facts.NetDev
	// UDPSockets are the bound UDP sockets with their drops: they say which
	// socket a growth of Udp RcvbufErrors was, the tunnel's or another's.
	UDPSockets []facts.UDPSocket
	// Firewall is nil when neither nft nor iptables answered.
	Firewall *facts.Firewall
	// IRQs are the network queues' rows of /proc/interrupts, each tied to
	// its NIC where sysfs says (collect.LabelIRQs).
	IRQs []facts.IRQ
	// ContextSwitches is /proc/stat's ctxt, 0 when unread.
	ContextSwitches uint64
	// TCPRmem and TCPWmem are net.ipv4.tcp_rmem and tcp_wmem (min,
	// default, max), nil when unread.
	TCPRmem, TCPWmem []int64
	// At is when the sample was read (zero when unknown): it turns a run's
	// counts into rates.
	At time.Time
}

// Which sample of a run TakeSample takes: the one before a run is only
// compared with the one after it, which names the firewall rules that grew
// (and serves as the next run's sample before, when that run follows at once).
const (
	Baseline = false // counters only
	Named    = true  // counters and the firewall rules' texts
)

// TakeSample reads /proc/net/snmp and netstat, /proc/net/softnet_stat, /proc/stat,
// /proc/net/dev, /proc/net/udp and udp6, /proc/interrupts (with the sysfs
// files that tie its rows to NICs) and the firewall's counters on t, with the rules' texts when
// named (Named, for the sample after a run). A source that cannot be read
// leaves its part empty: counters are evidence, not a reason to abort a
// measurement.
func TakeSample(ctx context.Context, t target.Target, named bool) Sample {
	var s Sample
	// One process per end and read: over ssh one round trip, in a slow guest
	// a fraction of a second instead of ten commands.
	paths := append([]string{"/proc/net/snmp", "/proc/net/netstat", "/proc/net/softnet_stat", "/proc/stat", "/proc/net/dev",
		"/proc/net/udp", "/proc/net/udp6", "/proc/interrupts", "/proc/sys/net/ipv4/tcp_rmem", "/proc/sys/net/ipv4/tcp_wmem"}, collect.IRQDeviceGlobs...)
	files, fw, _ := collect.ReadSample(ctx, t, named, paths...)
	s.At = time.Now()
	s.Firewall = fw
	if b, ok := files["/proc/net/snmp"]; ok {
		s.SNMP, _ = parse.ParseSNMP(bytes.NewReader(b))
	}
	if b, ok := files["/proc/net/netstat"]; ok && s.SNMP != nil {
		if ext, err := parse.ParseSNMP(bytes.NewReader(b)); err == nil {
			maps.Copy(s.SNMP, ext)
		}
	}
	if b, ok := files["/proc/net/softnet_stat"]; ok {
		s.Softnet, _ = parse.ParseSoftnet(bytes.NewReader(b))
	}
	if b, ok := files["/proc/stat"]; ok {
		s.CPU, _ = parse.ParseProcStat(bytes.NewReader(b))
		s.ContextSwitches, _ = parse.ParseContextSwitches(bytes.NewReader(b))
	}
	s.TCPRmem = tcpBuffers(files["/proc/sys/net/ipv4/tcp_rmem"])
	s.TCPWmem = tcpBuffers(files["/proc/sys/net/ipv4/tcp_wmem"])
	if b, ok := files["/proc/net/dev"]; ok {
		s.NetDev, _ = parse.ParseNetDev(bytes.NewReader(b))
	}
	for _, f := range []struct{ path, family string }{{"/proc/net/udp", "inet"}, {"/proc/net/udp6", "inet6"}} {
		if b, ok := files[f.path]; ok {
			socks, _ := parse.ParseProcNetUDP(bytes.NewReader(b), f.family)
			s.UDPSockets = append(s.UDPSockets, socks...)
		}
	}
	if b, ok := files["/proc/interrupts"]; ok {
		var devs []string // rows named after a device ("eth0", "eth0-TxRx-1") are kept whatever their name
		for _, n := range s.NetDev {
			devs = append(devs, n.Name)
		}
		if irqs, err := parse.ParseInterrupts(bytes.NewReader(b), devs); err == nil {
			collect.LabelIRQs(irqs, files)
			s.IRQs = irqs
		}
	}
	return s
}

// End is one end of a run: the host, and its WireGuard interface and listen
// port where known ("" and 0 otherwise).
type End struct {
	Host      target.Spec
	Interface string
	Port      int
}

// HostDelta is what a host's counters did during one run.
type HostDelta struct {
	Host target.Spec `json:"host"`
	// Tunnel and TunnelPort are the host's WireGuard interface and its listen
	// port, when known: they name its counters in Attribution.
	Tunnel          string    `json:"tunnel_interface,omitempty"`
	TunnelPort      int       `json:"tunnel_port,omitempty"`
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
	// Sockets are the UDP sockets whose drops grew, the tunnel's marked: a
	// growth of RcvbufErrors that no live socket shows was a socket that
	// closed during the run (a test's own), not the tunnel's.
	Sockets []SocketDrops `json:"udp_socket_drops"`
	// SocketsKnown says /proc/net/udp was read before and after the run.
	SocketsKnown bool `json:"udp_sockets_read,omitempty"`
	// Seconds is the time between the samples before and after the run
	// (0: unknown), over which the load below is counted.
	Seconds float64 `json:"seconds,omitempty"`
	// ContextSwitches are the host's, all CPUs (0: /proc/stat's ctxt unread);
	// /proc/stat is the machine's, so a namespace or container counts its
	// neighbours' too.
	ContextSwitches uint64 `json:"context_switches,omitempty"`
	// NICInterrupts are the NICs whose queue interrupts grew, most first;
	// the report's ClientUplink and ServerUplink name the tunnel's (hostload.go).
	NICInterrupts []NICInterrupts `json:"nic_interrupts,omitempty"`
	// TCP is what the host's TCP counted of segment order (nil: netstat
	// unread; order.go).
	TCP *TCPOrder `json:"tcp_order,omitempty"`
	// TCPRmem and TCPWmem are the host's net.ipv4.tcp_rmem and tcp_wmem
	// after the run (min, default, max bytes): the buffers its TCP flows
	// grow to at most.
	TCPRmem []int64 `json:"tcp_rmem,omitempty"`
	TCPWmem []int64 `json:"tcp_wmem,omitempty"`
}

// SocketDrops is what one UDP socket dropped during a run.
type SocketDrops struct {
	Port    int    `json:"port"`
	Family  string `json:"family"`
	Dropped uint64 `json:"dropped"`
	Tunnel  bool   `json:"tunnel"` // bound to the host's WireGuard listen port
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
	// RxFrame are frame, length, overrun and CRC errors: on a kernel
	// WireGuard interface, packets it rejected from its peers.
	RxFrame uint64 `json:"rx_frame_errors,omitempty"`
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
	if p.Sockets == nil {
		p.Sockets = []SocketDrops{}
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

// Delta compares two samples of one end.
func Delta(end End, before, after Sample) HostDelta {
	d := HostDelta{Host: end.Host, Tunnel: end.Interface, TunnelPort: end.Port, TCPRmem: after.TCPRmem, TCPWmem: after.TCPWmem}
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
	d.load(before, after)
	d.TCP = tcpOrder(before.SNMP, after.SNMP)
	d.Interfaces = interfaceGrowth(before.NetDev, after.NetDev)
	if before.UDPSockets != nil && after.UDPSockets != nil {
		d.SocketsKnown = true
		d.Sockets = socketGrowth(before.UDPSockets, after.UDPSockets, end.Port)
	}
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
			RxErrors: sub(n.RxErrors, p.RxErrors), TxErrors: sub(n.TxErrors, p.TxErrors), RxFrame: sub(n.RxFrame, p.RxFrame)}
		if g != (InterfaceGrowth{Interface: n.Name}) {
			out = append(out, g)
		}
	}
	return out
}

// socketGrowth lists the sockets whose drops grew, matched by inode (a port
// may be rebound); a socket that appeared during the run counts from 0.
// tunnelPort marks the tunnel's.
func socketGrowth(before, after []facts.UDPSocket, tunnelPort int) []SocketDrops {
	prev := map[uint64]uint64{}
	for _, s := range before {
		prev[s.Inode] = s.Drops
	}
	var out []SocketDrops
	for _, s := range after {
		if g := sub(s.Drops, prev[s.Inode]); g > 0 {
			out = append(out, SocketDrops{Port: s.LocalPort, Family: s.Family, Dropped: g, Tunnel: tunnelPort > 0 && s.LocalPort == tunnelPort})
		}
	}
	return out
}

// TunnelSocketDrops sums what the tunnel's own sockets dropped.
func (d HostDelta) TunnelSocketDrops() uint64 {
	var n uint64
	for _, s := range d.Sockets {
		if s.Tunnel {
			n += s.Dropped
		}
	}
	return n
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
// happened: socket, backlog (per CPU), interface, firewall; and what TCP saw
// of segment order (order.go). Interface names
// and rule texts come from the host: they are shown on one line with control
// characters escaped (shell.Comment). It is empty when nothing was dropped
// and segments kept their order.
func (d HostDelta) Attribution(role string) []string {
	who := fmt.Sprintf("%s (%s)", role, d.Host)
	var out []string
	if d.UDPRcvbufErrors > 0 {
		out = append(out, fmt.Sprintf("%s dropped %s UDP datagrams: receive buffer full (Udp RcvbufErrors)%s", who, Commas(d.UDPRcvbufErrors), d.whichSockets()))
	}
	if d.UDPSndbufErrors > 0 {
		out = append(out, fmt.Sprintf("%s dropped %s UDP datagrams: send buffer full (Udp SndbufErrors)", who, Commas(d.UDPSndbufErrors)))
	}
	out = append(out, d.softnetLines(who)...)
	out = append(out, d.orderLines(who)...)
	for _, n := range d.Interfaces {
		out = append(out, interfaceLines(who, n, n.Interface == d.Tunnel && d.Tunnel != "")...)
	}
	for _, g := range d.Firewall {
		out = append(out, fmt.Sprintf("%s dropped %s packets in the firewall: %s", who, Commas(int64(g.Packets)), shell.Comment(g.String())))
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
		out = append(out, fmt.Sprintf("%s dropped %s packets: backlog full (softnet dropped)", who, Commas(int64(d.SoftnetDropped))))
	}
	for _, c := range d.SoftnetCPUs {
		if c.Dropped > 0 {
			out = append(out, fmt.Sprintf("%s dropped %s packets on CPU %d: backlog full (softnet dropped)", who, Commas(int64(c.Dropped)), c.CPU))
		}
		if c.TimeSqueeze > 0 {
			out = append(out, fmt.Sprintf("%s ran out of softirq budget %s times on CPU %d (softnet time_squeeze)", who, Commas(int64(c.TimeSqueeze)), c.CPU))
		}
	}
	return out
}

// whichSockets says which sockets the receive buffer drops were on: the
// tunnel's, others (by port), or one that closed during the run.
func (d HostDelta) whichSockets() string {
	if !d.SocketsKnown || d.UDPRcvbufErrors <= 0 {
		return ""
	}
	var tunnel, others []string
	for _, s := range d.Sockets {
		part := fmt.Sprintf("port %d: %s", s.Port, Commas(int64(s.Dropped)))
		if s.Tunnel {
			tunnel = append(tunnel, part)
		} else {
			others = append(others, part)
		}
	}
	switch {
	case len(tunnel) > 0 && len(others) == 0:
		return ", on the tunnel's socket (" + strings.Join(tunnel, ", ") + ")"
	case len(tunnel) > 0:
		return ", on the tunnel's socket (" + strings.Join(tunnel, ", ") + ") and others (" + strings.Join(others, ", ") + ")"
	case len(others) > 0:
		return ", not on the tunnel's socket: on " + strings.Join(others, ", ")
	}
	return ", not on a socket still open: one that closed during the run (a test's own), not the tunnel's"
}

// interfaceLines says what one interface dropped or got wrong, a line per
// counter; on the tunnel's own interface the errors say what they mean for
// WireGuard (the kernel module counts its rejects there).
func interfaceLines(who string, n InterfaceGrowth, tunnel bool) []string {
	name := shell.Comment(shell.Quote(n.Interface))
	rxErr, txErr := "had %s receive errors at interface %s", "had %s transmit errors at interface %s"
	frame := ""
	if tunnel {
		txErr = "could not send %s packets into the tunnel at %s: no peer's AllowedIPs cover the destination, or the peer has no endpoint (tx errors)"
		frame = "rejected %s packets from its peers at %s: an inner source outside the peer's AllowedIPs, not IP, or a bad length (rx frame errors)"
	}
	rxErrors := n.RxErrors
	if tunnel {
		// The kernel counts each reject in rx_errors and in its kind: say it once.
		rxErrors = sub(n.RxErrors, n.RxFrame)
		rxErr = "had %s other receive errors at its WireGuard interface %s"
	}
	var out []string
	for _, c := range []struct {
		n    uint64
		what string
	}{
		{n.RxDropped, "dropped %s received packets at interface %s (rx drop)"},
		{n.TxDropped, "dropped %s outgoing packets at interface %s (tx drop)"},
		{rxErrors, rxErr},
		{n.RxFrame, frame},
		{n.TxErrors, txErr},
	} {
		if c.what == "" {
			continue
		}
		if c.n > 0 {
			out = append(out, who+" "+fmt.Sprintf(c.what, Commas(int64(c.n)), name))
		}
	}
	return out
}

// Commas renders 9312 as "9,312".
func Commas(n int64) string {
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
