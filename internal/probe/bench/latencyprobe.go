package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// PingInterval is the gap between a series' pings: iputils' shortest for
// users other than root, and BusyBox's -i takes it too.
const PingInterval = 200 * time.Millisecond

// idlePings is the idle series' length: two seconds before the first run.
const idlePings = 10

// pinger pings the server's tunnel and underlay addresses from the client.
type pinger struct {
	t                target.Target
	tunnel, underlay string
	mu               sync.Mutex
	missing          string // why ping cannot run on t, once seen: later series are not tried
}

func newPinger(c Config) *pinger {
	return &pinger{t: c.Client, tunnel: c.TunnelAddr, underlay: c.UnderlayAddr}
}

// pair pings both addresses at once, count pings each.
func (p *pinger) pair(ctx context.Context, count int) *Latency {
	l := &Latency{}
	var wg sync.WaitGroup
	var uerr error
	if p.underlay != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Underlay, uerr = p.series(ctx, p.underlay, count)
		}()
	}
	var terr error
	if p.tunnel != "" { // a hop's own underlay run has no tunnel address to ping (hops.go)
		l.Tunnel, terr = p.series(ctx, p.tunnel, count)
	}
	wg.Wait()
	for _, err := range []error{terr, uerr} {
		if err != nil {
			l.Errors = append(l.Errors, err.Error())
		}
	}
	return l
}

// series runs one ping of count echo requests to addr.
func (p *pinger) series(ctx context.Context, addr string, count int) (*RTT, error) {
	p.mu.Lock()
	missing := p.missing
	p.mu.Unlock()
	if missing != "" {
		return nil, errors.New(missing)
	}
	rtt, err := Ping(ctx, p.t, addr, count, "")
	if target.IsNotFound(err) {
		p.mu.Lock()
		p.missing = fmt.Sprintf("ping is not installed on %s (apt-get install iputils-ping): no round trips measured", p.t)
		p.mu.Unlock()
		return nil, errors.New(p.missing)
	}
	return rtt, err
}

// Ping sends count echo requests to addr from t, PingInterval apart, bound
// to device dev when it is not "" (ping -I), and summarises the replies. A
// ping that exits 1 for missing replies still counts; a missing ping is
// target.IsNotFound.
func Ping(ctx context.Context, t target.Target, addr string, count int, dev string) (*RTT, error) {
	args := []string{"-n", "-i", strconv.FormatFloat(PingInterval.Seconds(), 'f', -1, 64), "-c", strconv.Itoa(count), "-W", "1"}
	if dev != "" {
		args = append(args, "-I", dev)
	}
	out, err := t.Run(ctx, "ping", append(args, addr)...)
	if target.IsNotFound(err) {
		return nil, err
	}
	rtt, perr := ParsePing(bytes.NewReader(out))
	if perr != nil {
		if err != nil {
			return nil, fmt.Errorf("ping %s: %w", addr, err)
		}
		return nil, fmt.Errorf("ping %s: %w", addr, perr)
	}
	return rtt, nil
}

// duringRun pings both addresses while a run loads the path: from the end
// of its warm-up for a second less than its measured time (the run's own
// start takes a moment, and the series must end inside it). The returned
// func waits for the series; abort stops it (the run failed).
func (p *pinger) duringRun(ctx context.Context, omit, seconds int) (wait func() *Latency, abort func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan *Latency, 1)
	go func() {
		select {
		case <-time.After(time.Duration(omit)*time.Second + PingInterval):
		case <-ctx.Done():
			done <- nil
			return
		}
		done <- p.pair(ctx, LoadedPings(seconds))
	}()
	return func() *Latency { defer cancel(); return <-done }, cancel
}

// LoadedPings is how many pings fit in a run's measured seconds, less one.
func LoadedPings(seconds int) int {
	return max(3, int(time.Duration(seconds-1)*time.Second/PingInterval))
}

// uplinks finds the interfaces each end sends underlay traffic to the other
// through (where a queue discipline against a queue on the path belongs):
// the client's route to the server's underlay address, and the server's
// route back to the source address the client uses. "" where unknown.
func uplinks(ctx context.Context, c Config) (client, server string) {
	if c.UnderlayAddr == "" {
		return "", ""
	}
	out, err := c.Client.Run(ctx, "ip", "-o", "route", "get", c.UnderlayAddr)
	if err != nil {
		return "", ""
	}
	client, src := ParseRouteGet(string(out))
	if src == "" {
		return client, ""
	}
	if out, err = c.Server.Run(ctx, "ip", "-o", "route", "get", src); err == nil {
		server, _ = ParseRouteGet(string(out))
	}
	return client, server
}

// ParseRouteGet reads "ip -o route get" ("203.0.113.2 via 198.51.100.1 dev
// eth0 src 198.51.100.2 uid 0 \    cache"): the device and source address,
// each validated ("" when missing or not what it claims to be).
func ParseRouteGet(out string) (dev, src string) {
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "dev":
			if dev == "" && shell.Iface(f[i+1]) == nil {
				dev = f[i+1]
			}
		case "src":
			if src == "" && net.ParseIP(f[i+1]) != nil {
				src = f[i+1]
			}
		}
	}
	return dev, src
}
