package mtu

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/target"
)

// Def is the path MTU search, as doctor's targeted probe (listed in internal/probes).
var Def = probe.Def{Name: catalog.ProbeMTU, Raises: Raises,
	Doc:    "don't-fragment probes to the peer's endpoint, then MSS steps through the tunnel with a far end: when a run stalled or collapsed, or an MTU finding calls for it",
	Report: "mtu", Result: reflect.TypeFor[*Result](),
	Schema: "mtu.schema.json#/$defs/result"}

// WireGuard's overhead on top of the inner packet: outer IP + UDP (8) + WireGuard (32).
const (
	OverheadIPv4 = 60
	OverheadIPv6 = 80
	tcpIPv4      = 40 // IPv4 + TCP headers: MSS = MTU - 40
)

// Config is one path MTU probe from Client towards Addr.
type Config struct {
	Client target.Target
	Addr   string // the far end's underlay (endpoint) address: DF probes go there
	// Server and TunnelAddr enable MSS stepping through the tunnel (iperf3 on both).
	Server          target.Target
	TunnelAddr      string
	ClientInterface string // the client's WireGuard interface, for fixes
	// Implementation is that interface's WireGuard ("kernel", "userspace",
	// "" unknown): the kernel module clears DF on its outer packets, so a path
	// that black-holes DF packets fragments the tunnel's instead of eating them.
	Implementation string
	Min, Max       int // bounds of the path MTU search; Max 0: the client's route MTU
	Retries        int // boundary re-probes against lost probes (default 2)
	// MSSStep forces MSS stepping; otherwise it runs when DF probes die silently.
	MSSStep bool
	// Outside also steps the MSS of TCP to Addr itself when the DF probes
	// found a black hole: the hosts' own traffic outside the tunnel crosses
	// the same hop (doctor asks for it when the underlay's TCP collapsed).
	Outside bool
	// BackAddr is the client's own underlay address as Server reaches it and
	// ServerInterface Server's WireGuard interface: with them a black hole is
	// located (which way drops the large packets), and its fix goes to the
	// sender of that direction.
	BackAddr        string
	ServerInterface string
	// BackTunnelAddr is the client's tunnel address: MSS steps in the
	// return direction run from Server to it (iperf3 -R would stall on its
	// own results, sent back on the broken way at full size).
	BackTunnelAddr string
	// TrafficStalled says the caller saw TCP stall on this path (doctor's
	// bench: the tunnel's transfer or the hosts' own): a black hole found
	// here is its cause, never a note.
	TrafficStalled bool
	Port           int
	Progress       io.Writer
}

// How DF probes are sent.
const (
	MethodPing       = "ping -M do"
	MethodTraceroute = "traceroute -F"
)

// Probe is one DF ping.
type Probe struct {
	MTU    int    `json:"mtu"` // packet size probed (payload + 28 or 48)
	Passed bool   `json:"passed"`
	Hint   int    `json:"hint,omitempty"` // MTU named by a frag-needed or the route cache
	Note   string `json:"note,omitempty"`
}

// MSSRun is one MSS step through the tunnel.
type MSSRun struct {
	MSS     int     `json:"mss"`
	Mbit    float64 `json:"mbit"`
	Healthy bool    `json:"healthy"`
	Stalled bool    `json:"stalled,omitempty"`
	// Direction is the way the bulk data went: Forward (the client sent)
	// or Return (iperf3 -R: the far end sent).
	Direction string `json:"direction,omitempty"`
}

// Result is what the probe found.
type Result struct {
	Client        target.Spec `json:"client"`
	Addr          string      `json:"addr"`
	IPv6          bool        `json:"ipv6"`
	SearchMin     int         `json:"search_min"`
	SearchMax     int         `json:"search_max"`
	PathMTU       int         `json:"path_mtu"` // 0 when no DF probe passed
	FragNeededMTU int         `json:"frag_needed_mtu,omitempty"`
	FirstFailed   int         `json:"first_failed,omitempty"`
	BlackHole     bool        `json:"black_hole"`
	WGMTU         int         `json:"wg_mtu"`    // recommended WireGuard MTU
	MSSClamp      int         `json:"mss_clamp"` // recommended MSS clamp inside the tunnel
	Probes        []Probe     `json:"probes"`
	// Method is how the DF probes were sent: MethodPing, or MethodTraceroute
	// on hosts whose ping cannot forbid fragmentation (BusyBox).
	Method string `json:"method"`
	// MSS stepping: the largest healthy MSS and the first collapsed one.
	MSSRuns       []MSSRun `json:"mss_runs,omitempty"`
	ReferenceMbit float64  `json:"reference_mbit,omitempty"`
	MSSGood       int      `json:"mss_good,omitempty"`
	MSSBad        int      `json:"mss_bad,omitempty"`
	// Outside the tunnel (Config.Outside): TCP to Addr itself, the largest
	// healthy MSS and the first that collapsed.
	OutsideRuns []MSSRun `json:"outside_mss_runs,omitempty"`
	OutsideGood int      `json:"outside_mss_good,omitempty"`
	OutsideBad  int      `json:"outside_mss_bad,omitempty"`
	// MSSError says why MSS stepping could not run (iperf3 missing on the
	// server, say); the DF search's results stand without it.
	MSSError    string            `json:"mss_error,omitempty"`
	Seconds     float64           `json:"seconds"`
	Findings    []finding.Finding `json:"findings"`
	ClientIface string            `json:"client_interface,omitempty"`
	// Implementation is the client interface's WireGuard, as Config gave it.
	Implementation string `json:"implementation,omitempty"`
	// Direction is what the DF probes measured: RoundTrip for ping (a
	// request and its reply of the same size), Forward for traceroute -F
	// (its answer is a small ICMP error).
	Direction string `json:"direction,omitempty"`
	// OneWay locates a black hole (Config.BackAddr): which way drops its
	// packets. Nil when it did not run.
	OneWay *OneWay `json:"one_way,omitempty"`
	// Server and ServerIface are the far end and its WireGuard interface,
	// the sender of the return direction (for its fixes).
	Server      target.Spec `json:"server,omitzero"`
	ServerIface string      `json:"server_interface,omitempty"`
	// TrafficStalled is Config's: TCP stalled on this path before the probe.
	TrafficStalled bool `json:"traffic_stalled,omitempty"`
	// ClientUplink and ServerUplink are the devices each end sends the
	// other's underlay packets out of, read where a black hole was found:
	// the PMTUD case's workaround goes on them (workarounds.go).
	ClientUplink string `json:"client_uplink,omitempty"`
	ServerUplink string `json:"server_uplink,omitempty"`
}

// Broken is the direction a black hole drops packets in: Forward, Return,
// BothWays, or "" when it was not told (no one-way count, or one that did
// not tell). A forward-only probe (traceroute -F) tells Forward by itself.
func (r *Result) Broken() string {
	switch {
	case r.OneWay != nil && r.OneWay.Broken != "":
		return r.OneWay.Broken
	case r.Direction == Forward:
		return Forward
	}
	return ""
}

// MarshalJSON writes empty lists as [], never null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Probes == nil {
		p.Probes = []Probe{}
	}
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	return json.Marshal(p)
}

// Run probes the path MTU with DF pings and, when large probes die silently
// (or when asked), steps the TCP MSS through the tunnel.
func Run(ctx context.Context, c Config) (*Result, error) {
	start := time.Now()
	ip := net.ParseIP(c.Addr)
	if ip == nil {
		return nil, fmt.Errorf("%q is not an IP address", c.Addr)
	}
	res := &Result{Client: target.Of(c.Client), Addr: c.Addr, IPv6: ip.To4() == nil, ClientIface: c.ClientInterface, Implementation: c.Implementation,
		ServerIface: c.ServerInterface, TrafficStalled: c.TrafficStalled}
	if c.Server != nil {
		res.Server = target.Of(c.Server)
	}
	hdr := 28
	if res.IPv6 {
		hdr = 48
	}
	if c.Min == 0 {
		c.Min = 576
		if res.IPv6 {
			c.Min = 1280
		}
	}
	if c.Max == 0 {
		m, err := routeMTU(ctx, c.Client, c.Addr)
		if err != nil {
			return nil, err
		}
		c.Max = m
	}
	if c.Min > c.Max {
		return nil, fmt.Errorf("search range %d..%d is empty", c.Min, c.Max)
	}
	if c.Retries == 0 {
		c.Retries = 1
	}
	res.SearchMin, res.SearchMax = c.Min, c.Max

	live := &liveProber{c: c, pinger: &dfPinger{t: c.Client, addr: c.Addr, v6: res.IPv6}, hdr: hdr}
	if err := search(ctx, c, res, live); err != nil {
		return nil, err
	}
	if res.BlackHole {
		res.ClientUplink = uplinkTo(ctx, c.Client, c.Addr)
		if c.Server != nil {
			res.ServerUplink = uplinkTo(ctx, c.Server, c.BackAddr)
		}
	}
	res.Findings = Findings(res)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// prober is how a search probes: one DF probe of a size (the whole IP
// packet), one second of TCP through the tunnel at an MSS, and the tunnel's
// MTU. Run's is the host's ping (or traceroute) and iperf3; tests simulate
// a path.
type prober interface {
	df(ctx context.Context, size int) (Ping, error)
	// mss runs one MSS step to addr; reverse: the far end sends, to addr
	// on the client.
	mss(ctx context.Context, addr string, mss int, reverse bool) (MSSRun, error)
	// oneWay counts echo requests of size arriving at each end.
	oneWay(ctx context.Context, size int) (OneWay, error)
	tunnelMTU(ctx context.Context) int
	method() string
}
