package bench

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// The many-clients aggregate as the server saw it: the clients' runs start
// together where the server can be held (iperf.RunMany), apart elsewhere,
// and even together their streams open and close a moment apart; iperf3's
// figures are each client's own, counted by the sender. So the server's own counters decide: from the moment every
// client's connections are open (its /proc/net/tcp) until the first of them
// closes, the bytes its WireGuard interface received are what the tunnel
// carried with all of them at once.

// serverSample is the server at one moment: its tunnel interface's received
// bytes, and how many of the load's TCP connections are open.
type serverSample struct {
	at   time.Time
	rx   uint64
	open int
}

// counterInterval is how often the server is read during the load.
const counterInterval = 250 * time.Millisecond

// sampleServer reads the server every counterInterval until ctx ends, and
// returns the samples then. ports are the load's iperf3 server ports.
func sampleServer(ctx context.Context, t target.Target, iface string, ports []int) <-chan []serverSample {
	out := make(chan []serverSample, 1)
	rxPath := "/sys/class/net/" + iface + "/statistics/rx_bytes"
	go func() {
		var samples []serverSample
		tick := time.NewTicker(counterInterval)
		defer tick.Stop()
		for {
			files := collect.ReadFiles(context.WithoutCancel(ctx), t, rxPath, "/proc/net/tcp", "/proc/net/tcp6")
			if rx, err := strconv.ParseUint(strings.TrimSpace(string(files[rxPath])), 10, 64); err == nil {
				open := openOn(string(files["/proc/net/tcp"]), ports) + openOn(string(files["/proc/net/tcp6"]), ports)
				samples = append(samples, serverSample{at: time.Now(), rx: rx, open: open})
			}
			select {
			case <-ctx.Done():
				out <- samples
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// openOn counts the established TCP sockets of a /proc/net/tcp or tcp6
// table whose local port is one of ports; text that is no such table has
// none. It is pure.
func openOn(table string, ports []int) int {
	socks, _ := parse.ParseProcNetTCP(strings.NewReader(table), parse.TCPEstablished)
	n := 0
	for _, s := range socks {
		if slices.Contains(ports, s.LocalPort) {
			n++
		}
	}
	return n
}

// allOpen is the span of samples during which all want connections were
// open (the first sample with all of them to the last before one closed)
// and the interface's received rate over it; ok is false when they never
// were all open in two samples. It is pure.
func allOpen(samples []serverSample, want int) (from, to time.Time, mbit float64, ok bool) {
	first, last := -1, -1
	for i, s := range samples {
		if s.open >= want {
			if first < 0 {
				first = i
			}
			last = i
			continue
		}
		if first >= 0 {
			break
		}
	}
	if first < 0 || last == first || samples[last].rx < samples[first].rx || samples[last].at.Sub(samples[first].at) < MinOverlap {
		return from, to, 0, false
	}
	a, b := samples[first], samples[last]
	return a.at, b.at, float64(b.rx-a.rx) * 8 / 1e6 / b.at.Sub(a.at).Seconds(), true
}
