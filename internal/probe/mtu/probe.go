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
	MSSStep  bool
	Port     int
	Progress io.Writer
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
	// MSSError says why MSS stepping could not run (iperf3 missing on the
	// server, say); the DF search's results stand without it.
	MSSError    string            `json:"mss_error,omitempty"`
	Seconds     float64           `json:"seconds"`
	Findings    []finding.Finding `json:"findings"`
	ClientIface string            `json:"client_interface,omitempty"`
	// Implementation is the client interface's WireGuard, as Config gave it.
	Implementation string `json:"implementation,omitempty"`
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
	res := &Result{Client: c.Client.String(), Addr: c.Addr, IPv6: ip.To4() == nil, ClientIface: c.ClientInterface, Implementation: c.Implementation}
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

	res.Method = MethodPing
	var trace *tracerouteDF // set when the host's ping cannot forbid fragmentation
	s := NewSearch(c.Min, c.Max, c.Retries, 1)
	s.Likely(LikelyMTUs...)
	for {
		size, ok := s.Next()
		if !ok {
			break
		}
		var p Ping
		var err error
		if trace == nil {
			p, err = ping(ctx, c.Client, c.Addr, size-hdr, res.IPv6)
			if errors.Is(err, errNoDFPing) && !res.IPv6 {
				// A BusyBox router: its traceroute can set don't-fragment.
				if trace, err = newTracerouteDF(ctx, c.Client, c.Addr); err == nil {
					res.Method = MethodTraceroute
					p, err = trace.probe(ctx, size)
				}
			}
		} else {
			p, err = trace.probe(ctx, size)
		}
		if err != nil {
			return nil, err
		}
		pr := Probe{MTU: size, Passed: p.Received, Note: p.Error}
		if !p.Received && p.MTU > 0 {
			pr.Hint = p.MTU
			if !p.Local {
				res.FragNeededMTU = p.MTU
			}
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "DF probe %d bytes: %s\n", size, verdict(pr))
		}
		res.Probes = append(res.Probes, pr)
		s.Record(size, pr.Passed, pr.Hint)
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
	if (res.BlackHole || res.PathMTU == 0 || c.MSSStep) && c.Server != nil && c.TunnelAddr != "" {
		if err := stepMSS(ctx, c, res); err != nil {
			if ctx.Err() != nil {
				return nil, err
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
	res.Findings = Findings(res)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
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

func ping(ctx context.Context, t target.Target, addr string, payload int, v6 bool) (Ping, error) {
	args := []string{"-M", "do", "-s", strconv.Itoa(payload), "-c", "1", "-W", "1", "-n", addr}
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
	ReferenceMSS  = 1200
	HealthyShare  = 0.5 // a step is healthy at half the reference rate or more
	mssResolution = 8
	// mssStall bounds a one-second MSS step once one has finished: a healthy
	// one ends within about 1.5 s even on a busy machine, one over a black
	// hole never does. A slow host (a router, an emulated guest) takes longer
	// to start iperf3 at all: the bound grows to thrice the last step that
	// finished, and the first step (one expected to run) gets mssFirstStall.
	mssStall      = 4 * time.Second
	mssFirstStall = 20 * time.Second
)

// tcpTimestamps is the option Linux puts on every segment by default:
// iperf3's -M caps the payload, so a segment is MSS + 40 + 12 bytes.
const tcpTimestamps = 12

// confirmCliff tests the cliff the DF probes predict: the largest MSS whose
// segments fit the path MTU through the tunnel must run and one byte more
// must collapse. Two steps instead of a search; false (with the runs
// recorded) when the prediction does not hold (no timestamps, another hop).
func confirmCliff(res *Result, measure func(int) (MSSRun, error)) bool {
	fits := res.MSSClamp - tcpTimestamps
	at, err := measure(fits)
	if err != nil || at.Mbit <= 0 {
		return false
	}
	res.ReferenceMbit = at.Mbit
	res.MSSRuns[len(res.MSSRuns)-1].Healthy = true
	above, err := measure(fits + 1)
	if err != nil || above.Healthy {
		return false
	}
	res.MSSGood, res.MSSBad = fits, fits+1
	return true
}

func stepMSS(ctx context.Context, c Config, res *Result) error {
	maxMSS := 1380 // a default 1420 tunnel
	stall := mssFirstStall
	measure := func(mss int) (MSSRun, error) {
		start := time.Now()
		r, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: c.TunnelAddr, Port: c.Port, Seconds: 1, MSS: mss, Timeout: stall})
		run := MSSRun{MSS: mss}
		switch {
		case errors.Is(err, iperf.ErrStalled):
			run.Stalled = true
		case err != nil:
			return run, err
		default:
			run.Mbit = r.Mbit()
			stall = max(mssStall, 3*time.Since(start))
		}
		run.Healthy = res.ReferenceMbit > 0 && run.Mbit >= HealthyShare*res.ReferenceMbit
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "MSS %d through the tunnel: %.1f Mbit/s\n", mss, run.Mbit)
		}
		res.MSSRuns = append(res.MSSRuns, run)
		return run, nil
	}
	if res.PathMTU > 0 && confirmCliff(res, measure) {
		return nil
	}
	ref, err := measure(ReferenceMSS)
	if err != nil {
		return err
	}
	res.ReferenceMbit = ref.Mbit
	res.MSSRuns[len(res.MSSRuns)-1].Healthy = ref.Mbit > 0
	if ref.Mbit <= 0 {
		return nil // even small segments do not get through: not an MTU problem
	}
	s := NewSearch(ReferenceMSS, maxMSS, 0, mssResolution)
	s.Record(ReferenceMSS, true, 0)
	for {
		mss, ok := s.Next()
		if !ok {
			break
		}
		run, err := measure(mss)
		if err != nil {
			return err
		}
		s.Record(mss, run.Healthy, 0)
	}
	res.MSSGood, _ = s.Result()
	res.MSSBad = s.FirstFailed()
	return nil
}
