// Package udppath measures UDP outside the tunnel at the tunnel's rate: a
// path that polices UDP, or only WireGuard's port, is invisible to a TCP
// baseline, and a WireGuard tunnel is nothing but UDP to it. An iperf3 UDP
// run to the far end's underlay address, offered at the rate TCP carried
// there, shows what the path does to UDP on a port of wgperf's own; a second
// run carrying WireGuard's port number shows whether the path treats that
// port apart. The receiver's own socket drops during a run are counted
// apart, so a small receive buffer is not taken for the path. A collapse
// neither run reproduces is WireGuard's own (the multi-WAN router's 5G link
// carried raw UDP at 300 Mbit/s while WireGuard ran at 1.7), not a policer.
//
// Analyze and Judge are pure; Run is the I/O around them.
package udppath

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Def is UDP outside the tunnel; doctor keeps one result per slow direction, as doctor's targeted probe (listed in internal/probes).
var Def = probe.Def{Name: catalog.ProbeUDPOutside, FarEnd: true, Raises: Raises,
	Doc:    "UDP outside the tunnel at the rate TCP carried there, in each slow direction, on a port of its own and with WireGuard's port (sent to the far end's through a temporary nft rewrite where both ends listen on one): when nothing found explains a slow tunnel",
	Report: "udp_outside", Result: reflect.TypeFor[[]*Result](),
	Schema: "#/$defs/udp_outside"}

// Thresholds: UDP that loses this share on the path while TCP carried the
// rate is policed; from SevereLoss on, the tunnel can carry next to nothing.
const (
	PolicedLoss = 0.1
	SevereLoss  = 0.5
	// DefaultSeconds is the run's length: a policer's bucket empties within
	// the first fraction of a second at the tunnel's rate.
	DefaultSeconds = 2
	// CapacityShare: UDP that lost a policer's share but delivered at least
	// this share of what TCP carried on the path at the same time met the
	// path's capacity at that moment, not a policer (a path whose capacity
	// cycles: 19.6 of 47.8 Mbit/s arrived in a low phase, TCP right after
	// carried 19.1).
	CapacityShare = 0.8
)

// Config is one UDP run outside the tunnel, in one direction.
type Config struct {
	Client, Server target.Target
	// Addr is the server's underlay (endpoint) address.
	Addr string
	// Direction is bench.Upload (the client sends) or bench.Download.
	Direction string
	// TCPMbit is what TCP carried outside the tunnel that way: the rate
	// offered, the tunnel's target.
	TCPMbit float64
	// SenderInterface is the sending end's WireGuard interface (for the
	// fixes' commands; "" when unknown).
	SenderInterface string
	Seconds         int
	Port            int
	// WireGuardPort, when > 0, makes the client send from this port (iperf3
	// --cport): the run carries WireGuard's port number (see Judge).
	WireGuardPort int
	// ToPort, with WireGuardPort, sends the datagrams to the far end's
	// WireGuard port instead, from SourcePort (0: DefaultSourcePort), where
	// WireGuard holds the port on both ends: nft rewrites them on the way
	// out and on arrival and counts what arrived (toport.go), for the run's
	// seconds only.
	ToPort     bool
	SourcePort int
	// PathLowMbit is the lowest rate TCP carried on the path that way in a
	// second of the bench's own underlay runs (0: unknown): UDP that
	// delivers about that much met the path's capacity, not a policer.
	PathLowMbit float64
	// ClientInterface, ServerInterface and ServerKey name both ends'
	// WireGuard interfaces and the far end's public key, for the port fix's
	// commands ("" when unknown).
	ClientInterface, ServerInterface, ServerKey string
	Progress                                    io.Writer
}

// Result is one run and what it shows.
type Result struct {
	Client    target.Spec `json:"client"`
	Server    target.Spec `json:"server"`
	Addr      string      `json:"addr"`
	Direction string      `json:"direction"`
	TCPMbit   float64     `json:"tcp_mbit"`
	// OfferedMbit is what the sender sent, ArrivedMbit what arrived.
	OfferedMbit float64 `json:"offered_mbit"`
	ArrivedMbit float64 `json:"arrived_mbit"`
	Packets     int64   `json:"packets"`
	Lost        int64   `json:"lost_packets"`
	// ReceiverDrops are the receiving host's own UDP receive-buffer errors
	// during the run: lost at its socket, not on the path.
	ReceiverDrops int64 `json:"receiver_drops"`
	// PathLoss is the share of the datagrams lost on the path (0..1).
	PathLoss float64 `json:"path_loss"`
	// Policed: the path lost a policer's share (PolicedLoss) of UDP in
	// every run, each time delivering less than the path's capacity then.
	Policed bool `json:"policed"`
	// Capacity: the run lost a policer's share, but what arrived is what
	// TCP carried on the path at that moment (CapacityShare): the path's
	// capacity, no policer (a path whose capacity cycles).
	Capacity bool `json:"capacity,omitempty"`
	// TCPNowMbit is what TCP carried on the path the same way right after
	// a run that lost a policer's share (0: not measured); PathLowMbit is
	// the bench's lowest second that way (Config.PathLowMbit).
	TCPNowMbit      float64 `json:"tcp_now_mbit,omitempty"`
	PathLowMbit     float64 `json:"path_low_mbit,omitempty"`
	SenderInterface string  `json:"sender_interface,omitempty"`
	// WireGuardPort is the WireGuard port number the run's datagrams
	// carried; 0 for a port of wgperf's own.
	WireGuardPort int `json:"wireguard_port,omitempty"`
	// ToPort: the datagrams were sent to the far end's WireGuard port
	// (Config.ToPort); Counted is how many arrived with it, as the
	// receiving end's nft counter saw them.
	ToPort   bool              `json:"to_port,omitempty"`
	Counted  uint64            `json:"counted,omitempty"`
	Seconds  float64           `json:"seconds"`
	Findings []finding.Finding `json:"findings"`

	clientInterface, serverInterface, serverKey string
}

// MarshalJSON writes empty lists as [], never null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	return json.Marshal(p)
}

// Run offers UDP at c.TCPMbit to c.Addr in c.Direction and analyses it.
func Run(ctx context.Context, c Config) (*Result, error) {
	start := time.Now()
	if c.TCPMbit <= 0 {
		return nil, fmt.Errorf("no TCP rate outside the tunnel to offer UDP at")
	}
	if c.Seconds <= 0 {
		c.Seconds = DefaultSeconds
	}
	receiver := c.Server
	if c.Direction == bench.Download {
		receiver = c.Client
	}
	// A policer drops in every run; a run that loses that much is run once
	// more and the one that lost less stands, so a moment when the hosts'
	// own CPUs fell behind is not blamed on the path (a CI run beside an
	// emulated guest lost 22% of a run on a path that loses 1%). Each such
	// run is followed by TCP on the path the same way: what the path
	// carried at that moment, against which the loss is judged (Capacity).
	test := iperf.Test{Addr: c.Addr, Port: c.Port, Seconds: c.Seconds, Reverse: c.Direction == bench.Download, UDPMbit: c.TCPMbit, CPort: c.WireGuardPort}
	var tp *toPort
	if c.ToPort && c.WireGuardPort > 0 {
		test.CPort = cmp.Or(c.SourcePort, DefaultSourcePort)
		t, err := newToPort(c.Addr, c.WireGuardPort, cmp.Or(c.Port, iperf.DefaultPort), test.CPort)
		if err != nil {
			return nil, err
		}
		if err := t.install(ctx, c.Client, c.Server); err != nil {
			return nil, err
		}
		defer t.remove(c.Client, c.Server)
		tp = &t
	}
	var r *Result
	for try := 1; try <= 2 && (r == nil || r.Policed); try++ {
		before := bench.TakeSample(ctx, receiver, bench.Baseline)
		var counted uint64
		if tp != nil {
			n, err := tp.arrived(ctx, receiver)
			if err != nil {
				return nil, err
			}
			counted = n
		}
		res, err := iperf.Run(ctx, c.Client, c.Server, test)
		if err != nil {
			if r != nil {
				break // the first run stands
			}
			return nil, err
		}
		after := bench.TakeSample(ctx, receiver, bench.Named)
		drops := bench.Delta(bench.End{Host: target.Of(receiver)}, before, after).UDPRcvbufErrors
		next := Analyze(c, res, drops)
		if tp != nil {
			n, err := tp.arrived(ctx, receiver)
			if err != nil {
				return nil, err
			}
			if next.Counted = n - counted; next.Counted == 0 && res.Packets > 0 {
				return nil, fmt.Errorf("no datagram reached %s with WireGuard's port %d (rewritten on the way: a NAT on the path?)", receiver, c.WireGuardPort)
			}
		}
		if next.Policed {
			tcp, terr := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: c.Addr, Port: c.Port, Seconds: c.Seconds, Omit: 1,
				Reverse: c.Direction == bench.Download})
			if terr == nil {
				next.AgainstTCP(tcp.Mbit())
			}
		}
		if r == nil || (r.Policed && (!next.Policed || next.PathLoss < r.PathLoss)) {
			r = next
		}
	}
	r.Seconds = time.Since(start).Seconds()
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "UDP outside the tunnel, %s%s: %.1f Mbit/s offered, %.1f arrived, %.0f%% lost on the path%s\n",
			c.Direction, r.portWords(), r.OfferedMbit, r.ArrivedMbit, 100*r.PathLoss, r.CapacityWords())
	}
	return r, nil
}

// Analyze reads one UDP run: what the path lost once the receiver's own
// socket drops are taken out, and whether that is a policer. A run on a port
// of wgperf's own that loses that much is path.udp-policed; a run carrying
// WireGuard's port is judged against the other one (Judge). It is pure.
func Analyze(c Config, res *iperf.Result, receiverDrops int64) *Result {
	r := &Result{Client: target.Of(c.Client), Server: target.Of(c.Server), Addr: c.Addr, Direction: c.Direction, TCPMbit: c.TCPMbit,
		OfferedMbit: res.SentMbit, ArrivedMbit: res.ReceivedMbit, Packets: res.Packets, Lost: res.LostPackets,
		ReceiverDrops: receiverDrops, SenderInterface: c.SenderInterface, WireGuardPort: c.WireGuardPort, ToPort: c.ToPort && c.WireGuardPort > 0,
		clientInterface: c.ClientInterface, serverInterface: c.ServerInterface, serverKey: c.ServerKey}
	r.PathLowMbit = c.PathLowMbit
	if res.Packets > 0 {
		r.PathLoss = max(0, float64(res.LostPackets-receiverDrops)) / float64(res.Packets)
	}
	r.judge()
	return r
}

// AgainstTCP judges the run again against what TCP carried on the path the
// same way right after it. It is pure.
func (r *Result) AgainstTCP(mbit float64) {
	r.TCPNowMbit = mbit
	r.judge()
}

// capacityMbit is the least the path was measured to carry that way around
// the run (0: unknown).
func (r *Result) capacityMbit() float64 {
	switch {
	case r.TCPNowMbit > 0 && r.PathLowMbit > 0:
		return min(r.TCPNowMbit, r.PathLowMbit)
	case r.TCPNowMbit > 0:
		return r.TCPNowMbit
	}
	return r.PathLowMbit
}

// judge decides policed or capacity: a policer's share lost is a policer
// only where less arrived than the path carried at the time.
func (r *Result) judge() {
	lost := r.PathLoss >= PolicedLoss
	c := r.capacityMbit()
	r.Capacity = lost && c > 0 && r.ArrivedMbit >= CapacityShare*c
	r.Policed = lost && !r.Capacity
	r.Findings = nil
	if r.Policed && r.WireGuardPort == 0 {
		r.Findings = []finding.Finding{r.finding()}
	}
}

// CapacityWords says, after a run that lost a policer's share, what TCP
// carried on the path around it and whether that was the path's capacity
// ("" for a run that did not lose that much).
func (r *Result) CapacityWords() string {
	c := r.capacityMbit()
	switch {
	case r.Capacity:
		return fmt.Sprintf(", as much as TCP carried on the path then (%.1f Mbit/s): its capacity, no policer", c)
	case r.Policed && c > 0:
		return fmt.Sprintf(", while TCP carried %.1f Mbit/s on the path then", c)
	}
	return ""
}

// portWords names the port the run's datagrams carried, for progress lines.
func (r *Result) portWords() string {
	switch {
	case r.WireGuardPort == 0:
		return ""
	case r.ToPort:
		return fmt.Sprintf(" to WireGuard's port %d (%d counted on arrival)", r.WireGuardPort, r.Counted)
	}
	return fmt.Sprintf(" with WireGuard's port %d", r.WireGuardPort)
}

// sender is the host that sent the run's datagrams.
func (r *Result) sender() target.Spec {
	if r.Direction == bench.Download {
		return r.Server
	}
	return r.Client
}

func (r *Result) finding() finding.Finding {
	sev := finding.Warning
	if r.PathLoss >= SevereLoss {
		sev = finding.Critical
	}
	through := r.ArrivedMbit
	f := finding.Finding{
		ID: catalog.PathUDPPoliced, Severity: sev, Host: r.sender(), Interface: r.SenderInterface,
		Title: fmt.Sprintf("UDP is policed on the path (%s): %.1f Mbit/s offered outside the tunnel, %.1f arrived (%.0f%% lost), while TCP carried %.1f",
			r.Direction, r.OfferedMbit, through, 100*r.PathLoss, r.TCPMbit),
		Detail: "Something on the path drops UDP above a rate it lets TCP through at: a carrier's policer, a " +
			"firewall's UDP flood limit, a shaper for UDP alone. WireGuard is nothing but UDP to it, so the tunnel gets what the " +
			"policer leaves and TCP inside it backs off from every drop. The cause is the path, not the hosts.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "iperf3 -u", Key: "UDP offered outside the tunnel (" + r.Direction + ")", Value: fmt.Sprintf("%.1f Mbit/s", r.OfferedMbit)}.Of(r.OfferedMbit, finding.Mbits),
			finding.Evidence{Source: "iperf3 -u", Key: "UDP arrived", Value: fmt.Sprintf("%.1f Mbit/s", through)}.Of(through, finding.Mbits),
			finding.Evidence{Source: "iperf3 -u", Key: "datagrams lost on the path", Value: fmt.Sprintf("%d of %d (%.0f%%)", r.Lost-r.ReceiverDrops, r.Packets, 100*r.PathLoss),
				Threshold: fmt.Sprintf("< %.0f%%", 100*PolicedLoss)}.Of(100*r.PathLoss, finding.Percent),
			finding.Evidence{Source: "/proc/net/snmp", Key: "receiver's own UDP receive-buffer drops during the run", Value: fmt.Sprint(r.ReceiverDrops)}.Of(float64(r.ReceiverDrops), finding.Packets),
			finding.Evidence{Source: "iperf3", Key: "TCP outside the tunnel (" + r.Direction + ")", Value: fmt.Sprintf("%.1f Mbit/s", r.TCPMbit)}.Of(r.TCPMbit, finding.Mbits),
		},
		Fixes: policedFixes(r.SenderInterface, r.Addr, r.TCPMbit, through),
	}
	if c := r.capacityMbit(); c > 0 {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "iperf3", Key: "the least TCP carried on the path around the run (" + r.Direction + ")",
			Value: fmt.Sprintf("%.1f Mbit/s", c), Threshold: fmt.Sprintf("≤ %.1f Mbit/s (what arrived / %.1f): the path's capacity then", r.ArrivedMbit/CapacityShare, CapacityShare)}.Of(c, finding.Mbits))
	}
	return f
}

// policedFixes are what can be done about a path that polices UDP: none of
// them is a change wgperf makes on its own, since the hosts are not the cause.
func policedFixes(iface, addr string, tcpMbit, arrivedMbit float64) []finding.Fix {
	if iface == "" {
		iface = "wg0"
	}
	capMbit := max(1, int(arrivedMbit*0.9))
	rate := fmt.Sprintf("%.0fM", max(1, tcpMbit))
	return []finding.Fix{
		{
			Description: "Show the carrier (or the owner of the firewall) UDP policed where TCP runs, and ask them to stop; or move the tunnel to an uplink that does not police it",
			Commands:    []string{shell.Join("iperf3", "-c", addr, "-u", "-b", rate, "-t", "10"), shell.Join("iperf3", "-c", addr, "-t", "10")},
		},
		{
			Description: fmt.Sprintf("Keep the tunnel under the policer: cap %s at %d Mbit/s, so TCP inside it sees a steady rate instead of drops", iface, capMbit),
			Commands:    []string{shell.Join("tc", "qdisc", "replace", "dev", iface, "root", "tbf", "rate", fmt.Sprintf("%dmbit", capMbit), "burst", "64kb", "latency", "200ms")},
		},
	}
}
