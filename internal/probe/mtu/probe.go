package mtu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

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
	Client        string  `json:"client"`
	Addr          string  `json:"addr"`
	IPv6          bool    `json:"ipv6"`
	SearchMin     int     `json:"search_min"`
	SearchMax     int     `json:"search_max"`
	PathMTU       int     `json:"path_mtu"` // 0 when no DF probe passed
	FragNeededMTU int     `json:"frag_needed_mtu,omitempty"`
	FirstFailed   int     `json:"first_failed,omitempty"`
	BlackHole     bool    `json:"black_hole"`
	WGMTU         int     `json:"wg_mtu"`    // recommended WireGuard MTU
	MSSClamp      int     `json:"mss_clamp"` // recommended MSS clamp inside the tunnel
	Probes        []Probe `json:"probes"`
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
	Server      string `json:"server,omitempty"`
	ServerIface string `json:"server_interface,omitempty"`
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
	res := &Result{Client: c.Client.String(), Addr: c.Addr, IPv6: ip.To4() == nil, ClientIface: c.ClientInterface, Implementation: c.Implementation,
		ServerIface: c.ServerInterface, TrafficStalled: c.TrafficStalled}
	if c.Server != nil {
		res.Server = c.Server.String()
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

// search runs the DF search and, when large probes die silently (or when
// asked), the MSS search through the tunnel: at most ProbeBudget probes and
// runs together.
func search(ctx context.Context, c Config, res *Result, p prober) error {
	s := NewSearch(c.Min, c.Max, c.Retries, 1)
	s.Likely(LikelyMTUs...)
	s.Limit(DFLimit)
	for {
		size, ok := s.Next()
		if !ok {
			break
		}
		pg, err := p.df(ctx, size)
		if err != nil {
			return err
		}
		pr := Probe{MTU: size, Passed: pg.Received, Note: pg.Error}
		if !pg.Received && pg.MTU > 0 {
			pr.Hint = pg.MTU
			if !pg.Local {
				res.FragNeededMTU = pg.MTU
			}
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "DF probe %d bytes: %s\n", size, verdict(pr))
		}
		res.Probes = append(res.Probes, pr)
		s.Record(size, pr.Passed, pr.Hint)
	}
	res.Method = p.method()
	res.Direction = RoundTrip
	if res.Method == MethodTraceroute {
		res.Direction = Forward // traceroute's answer is a small ICMP error
	}
	if got, found := s.Result(); found {
		res.PathMTU = got
	}
	res.FirstFailed = s.FirstFailed()
	// Silent deaths above the largest passing size: no ICMP told the sender.
	res.BlackHole = res.PathMTU > 0 && res.FirstFailed > 0 && s.Silent(res.FirstFailed) && res.FragNeededMTU == 0
	if res.PathMTU > 0 {
		over := OverheadIPv4
		if res.IPv6 {
			over = OverheadIPv6
		}
		res.WGMTU = res.PathMTU - over
		res.MSSClamp = res.WGMTU - tcpIPv4
	}
	if res.BlackHole && res.Direction == RoundTrip && c.Server != nil && c.BackAddr != "" {
		// A round trip cannot tell which way the large packets vanish.
		ow, err := p.oneWay(ctx, res.FirstFailed)
		ow.Size = res.FirstFailed
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			ow = OneWay{Size: res.FirstFailed, Error: err.Error()}
		}
		ow.Broken = locate(ow)
		res.OneWay = &ow
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "one-way %d bytes: %d/%d arrived forward, %d/%d back: %s\n", ow.Size,
				ow.ForwardArrived, ow.ForwardSent, ow.ReturnArrived, ow.ReturnSent, orUntold(ow.Broken))
		}
	}
	if (res.BlackHole || res.PathMTU == 0 || c.MSSStep) && c.Server != nil && c.TunnelAddr != "" {
		if err := stepMSS(ctx, c, res, p, ProbeBudget-len(res.Probes)); err != nil {
			if ctx.Err() != nil {
				return err
			}
			res.MSSError = err.Error()
		}
		if res.PathMTU == 0 && res.MSSGood > 0 && res.MSSBad > 0 {
			// ICMP is blocked outright: the MSS cliff is all there is to go on.
			res.WGMTU = res.MSSGood + tcpIPv4
			res.MSSClamp = res.MSSGood
			res.BlackHole = true
		}
	}
	// The hosts' own TCP, with what the budget has left once the tunnel's
	// cliff is known.
	if left := ProbeBudget - len(res.Probes) - len(res.MSSRuns); res.BlackHole && res.PathMTU > 0 && c.Outside && c.Server != nil && left > 0 {
		if err := stepOutside(ctx, c, res, p, min(left, outsideRuns)); err != nil {
			if ctx.Err() != nil {
				return err
			}
			res.MSSError = err.Error()
		}
	}
	return nil
}

// liveProber probes with the client's ping (BusyBox: traceroute) and iperf3.
type liveProber struct {
	c      Config
	pinger *dfPinger
	trace  *tracerouteDF // set when the host's ping cannot forbid fragmentation
	hdr    int           // IP + ICMP headers: a DF ping's payload is size - hdr
	stall  time.Duration // how long an MSS step may take before it counts as stalled
	// iperfChecked: both ends have iperf3 (iperf.Check), asked once for the
	// many MSS steps instead of twice a step.
	iperfChecked bool
}

func (l *liveProber) method() string {
	if l.trace != nil {
		return MethodTraceroute
	}
	return MethodPing
}

func (l *liveProber) df(ctx context.Context, size int) (Ping, error) {
	if l.trace != nil {
		return l.trace.probe(ctx, size)
	}
	p, err := l.pinger.probe(ctx, size-l.hdr)
	if errors.Is(err, errNoDFPing) && !l.pinger.v6 {
		// A BusyBox router: its traceroute can set don't-fragment.
		if l.trace, err = newTracerouteDF(ctx, l.c.Client, l.c.Addr); err == nil {
			return l.trace.probe(ctx, size)
		}
	}
	return p, err
}

func (l *liveProber) mss(ctx context.Context, addr string, mss int, reverse bool) (MSSRun, error) {
	if l.stall == 0 {
		l.stall = mssFirstStall
	}
	run := MSSRun{MSS: mss, Direction: Forward}
	if reverse {
		run.Direction = Return
	}
	if !l.iperfChecked {
		for _, t := range []target.Target{l.c.Client, l.c.Server} {
			if err := iperf.Check(ctx, t); err != nil {
				return run, err
			}
		}
		l.iperfChecked = true
	}
	start := time.Now()
	client, server := l.c.Client, l.c.Server
	if reverse {
		client, server = server, client // the far end sends; its results are small
	}
	r, err := iperf.Run(ctx, client, server, iperf.Test{Addr: addr, Port: l.c.Port, Seconds: 1, MSS: mss, Terse: true, Timeout: l.stall, Checked: true})
	switch {
	case errors.Is(err, iperf.ErrStalled):
		run.Stalled = true
	case err != nil:
		return run, err
	default:
		run.Mbit = r.Mbit()
		l.stall = max(mssStall, 3*time.Since(start))
	}
	return run, nil
}

// oneWay sends echo requests of size each way, the client's to Addr and the
// far end's to BackAddr, and counts them where they arrive.
func (l *liveProber) oneWay(ctx context.Context, size int) (OneWay, error) {
	o := OneWay{Size: size}
	var err error
	v6, rtt := l.pinger.v6, l.pinger.rttMs
	if o.ForwardSent, o.ForwardArrived, _, err = oneWay(ctx, readInEchos, l.c.Client, l.c.Server, l.c.Addr, size, v6, rtt); err != nil {
		return o, err
	}
	o.ReturnSent, o.ReturnArrived, o.ReturnRefused, err = oneWay(ctx, readInEchos, l.c.Server, l.c.Client, l.c.BackAddr, size, v6, rtt)
	return o, err
}

// tunnelMTU is the client's WireGuard MTU, or wg-quick's default when it
// cannot be read.
func (l *liveProber) tunnelMTU(ctx context.Context) int {
	if l.c.ClientInterface != "" {
		if b, err := l.c.Client.ReadFile(ctx, "/sys/class/net/"+l.c.ClientInterface+"/mtu"); err == nil {
			if m, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && m >= 576 {
				return m
			}
		}
	}
	return defaultTunnelMTU
}

func verdict(p Probe) string {
	switch {
	case p.Passed:
		return "passed"
	case p.Hint > 0:
		return fmt.Sprintf("too big (mtu %d)", p.Hint)
	case p.Note != "":
		return p.Note
	}
	return "no reply"
}

// The search's budget: DF probes and MSS runs together, on any path.
const (
	ProbeBudget = 12
	// DFLimit leaves the MSS search at least four runs.
	DFLimit = 8
)

// dfPinger sends DF pings and learns from them how long to wait: a second
// until one has passed (the path's round trip is unknown), then a few round
// trips, so the silent failures a black hole answers with cost a fraction of
// a second each instead of a second.
type dfPinger struct {
	t     target.Target
	addr  string
	v6    bool
	rttMs float64 // the largest round trip of a reply so far
	whole bool    // this ping takes whole seconds only
}

// dfWait is how long to wait for a DF probe's reply after replies took rttMs.
func dfWait(rttMs float64) time.Duration {
	if rttMs <= 0 {
		return time.Second
	}
	w := time.Duration(4*rttMs*float64(time.Millisecond)) + 200*time.Millisecond
	return min(max(w, 250*time.Millisecond), time.Second)
}

func (d *dfPinger) probe(ctx context.Context, payload int) (Ping, error) {
	wait := dfWait(d.rttMs)
	if d.whole {
		wait = time.Second
	}
	p, err := ping(ctx, d.t, d.addr, payload, d.v6, wait)
	if errors.Is(err, errWholeSeconds) {
		d.whole = true
		p, err = ping(ctx, d.t, d.addr, payload, d.v6, time.Second)
	}
	if err == nil && p.Received {
		d.rttMs = max(d.rttMs, p.RTTms)
	}
	return p, err
}

// errWholeSeconds is an older ping refusing a fractional -W.
var errWholeSeconds = errors.New("ping takes -W in whole seconds")

func ping(ctx context.Context, t target.Target, addr string, payload int, v6 bool, wait time.Duration) (Ping, error) {
	w := "1"
	if wait < time.Second {
		w = strconv.FormatFloat(wait.Seconds(), 'f', 2, 64)
	}
	args := []string{"-M", "do", "-s", strconv.Itoa(payload), "-c", "1", "-W", w, "-n", addr}
	if v6 {
		args = append([]string{"-6"}, args...)
	}
	out, err := t.Run(ctx, "ping", args...)
	var te *target.Error
	if err != nil {
		if target.IsNotFound(err) {
			return Ping{}, fmt.Errorf("ping is not installed on %s (apt-get install iputils-ping)", t)
		}
		if !errors.As(err, &te) || te.ExitCode < 0 {
			return Ping{}, err
		}
		if noDFFlag(te.Stderr) {
			return Ping{}, fmt.Errorf("%s: %w", t, errNoDFPing)
		}
		if te.ExitCode == 2 && w != "1" && (strings.Contains(te.Stderr, "linger") || strings.Contains(te.Stderr, "invalid argument")) {
			return Ping{}, errWholeSeconds
		}
		if te.ExitCode == 2 && !strings.Contains(te.Stderr, "message too long") {
			// ping exits 2 on errors such as an unknown host or no permission.
			return Ping{}, fmt.Errorf("%s: ping %s: %s", t, addr, strings.TrimSpace(te.Stderr))
		}
		out = append(out, te.Stderr...)
	}
	return ParsePing(bytes.NewReader(out))
}

// routeMTU is the MTU of the client's interface towards addr.
func routeMTU(ctx context.Context, t target.Target, addr string) (int, error) {
	out, err := t.Run(ctx, "ip", "-j", "route", "get", addr)
	read := parse.ParseRouteGet
	if err != nil {
		// BusyBox ip (a router without ip-full) has no -j: read its text.
		if out, err = t.Run(ctx, "ip", "route", "get", addr); err != nil {
			return 0, fmt.Errorf("no route to %s on %s: %w", addr, t, err)
		}
		read = parse.ParseRouteGetText
	}
	dev, _, _, err := read(bytes.NewReader(out))
	if err != nil {
		return 0, err
	}
	b, err := t.ReadFile(ctx, "/sys/class/net/"+dev+"/mtu")
	if err != nil {
		return 0, err
	}
	m, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: MTU of %s: %q", t, dev, b)
	}
	return m, nil
}

// MSS stepping bounds: the reference MSS fits the IPv6 minimum MTU through a tunnel.
const (
	ReferenceMSS = 1200
	HealthyShare = 0.5 // a step is healthy at half the best rate or more
	// minHealthyMbit: a one-second run below it crossed nothing but a few
	// retransmitted segments (a black hole lets about 0.1 Mbit/s through).
	minHealthyMbit = 1.0
	// mssStall bounds a one-second MSS step once one has finished: a healthy
	// one ends within about 1.5 s even on a busy machine, one over a black
	// hole usually too. A slow host (a router, an emulated guest) takes longer
	// to start iperf3 at all: the bound grows to thrice the last step that
	// finished, and the first step (one expected to run) gets mssFirstStall.
	mssStall      = 4 * time.Second
	mssFirstStall = 20 * time.Second
	// defaultTunnelMTU is what the search assumes when it cannot read the
	// client's WireGuard MTU (wg-quick's default).
	defaultTunnelMTU = 1420
)

// stepMSS finds the MSS cliff through the tunnel in at most runs one-second
// iperf3 runs, starting from the cliff the DF search predicts: the tunnel
// pads its packets to 16 bytes, so a known path MTU names the cliff to the
// byte and two runs confirm it; without one (ICMP blocked) the search bisects
// the padding grid below the tunnel's MTU.
func stepMSS(ctx context.Context, c Config, res *Result, p prober, runs int) error {
	tunnelMTU := p.tunnelMTU(ctx)
	overhead, headers := OverheadIPv4, tcpIPv4
	if res.IPv6 {
		overhead = OverheadIPv6
	}
	if ip := net.ParseIP(c.TunnelAddr); ip != nil && ip.To4() == nil {
		headers = TCPIPv6Headers
	}
	top := tunnelMTU - headers
	lo, hi := ReferenceMSS, top+1
	if res.PathMTU > 0 {
		lo = PredictMSSCliff(res.PathMTU, tunnelMTU, overhead, headers)
		if res.FirstFailed > 0 {
			hi = PredictMSSCliff(res.FirstFailed-1, tunnelMTU, overhead, headers) + 1
		}
	}
	s := newMSSSearch(lo, hi, min(ReferenceMSS, lo-2*PaddingMultiple), top, headers, runs)
	addr, reverse := c.TunnelAddr, false
	if res.Broken() == Return && c.BackTunnelAddr != "" {
		addr, reverse = c.BackTunnelAddr, true
	}
	runs2, ref, err := runMSS(ctx, c, p, s, addr, reverse, "through the tunnel")
	res.MSSRuns, res.ReferenceMbit = runs2, ref
	res.MSSGood, res.MSSBad = s.Result()
	return err
}

// outsideRuns bounds the MSS runs outside the tunnel: the DF search names
// the cliff there exactly (no padding), so two runs prove it.
const outsideRuns = 3

// stepOutside proves the black hole on the hosts' own TCP: to Addr itself,
// outside the tunnel, the largest MSS whose segments fit the path MTU runs
// and one byte more collapses.
func stepOutside(ctx context.Context, c Config, res *Result, p prober, runs int) error {
	headers := tcpIPv4
	if res.IPv6 {
		headers = TCPIPv6Headers
	}
	lo, hi := res.PathMTU-headers, res.SearchMax-headers+1
	if res.FirstFailed > 0 {
		hi = res.FirstFailed - headers
	}
	s := newMSSSearch(lo, hi, min(ReferenceMSS, lo-2*PaddingMultiple), res.SearchMax-headers, 0, runs)
	s.unpadded = true
	addr, reverse := c.Addr, false
	if res.Broken() == Return && c.BackAddr != "" {
		addr, reverse = c.BackAddr, true
	}
	done, _, err := runMSS(ctx, c, p, s, addr, reverse, "outside the tunnel")
	res.OutsideRuns = done
	res.OutsideGood, res.OutsideBad = s.Result()
	return err
}

// runMSS runs s's MSS search against addr and returns its runs and the
// reference rate (the first healthy run's). reverse: the far end sends, to
// addr on the client, as in the direction a located black hole drops.
func runMSS(ctx context.Context, c Config, p prober, s *mssSearch, addr string, reverse bool, where string) ([]MSSRun, float64, error) {
	var runs []MSSRun
	best, ref := 0.0, 0.0
	for {
		mss, ok := s.Next()
		if !ok {
			return runs, ref, nil
		}
		run, err := p.mss(ctx, addr, mss, reverse)
		if err != nil {
			return runs, ref, err
		}
		run.Healthy = run.Mbit >= max(minHealthyMbit, HealthyShare*best)
		if run.Healthy {
			best = max(best, run.Mbit)
			if ref == 0 {
				ref = run.Mbit
			}
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "MSS %d %s (%s): %.1f Mbit/s\n", mss, where, run.Direction, run.Mbit)
		}
		runs = append(runs, run)
		s.Record(mss, run.Healthy)
	}
}
