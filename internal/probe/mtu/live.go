package mtu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

// This file holds the I/O shell around the searches: the live prober's DF
// pings (traceroute on a BusyBox host), iperf3 MSS steps and one-way counts
// on the hosts, and the client's route MTU.

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
