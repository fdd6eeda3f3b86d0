package exporter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// bareDump is "wg show all dump" of n peers on wg0 with nothing but a
// short key, 60 bytes a peer: as many as the read budget lets through.
func bareDump(n int) string {
	var b strings.Builder
	b.WriteString("wg0\t(hidden)\tAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\t51820\toff\n")
	for i := range n {
		fmt.Fprintf(&b, "wg0\t%023d=\t(none)\t(none)\t(none)\t0\t0\t0\toff\n", i)
	}
	return b.String()
}

// hubDump is "wg show all dump" of a hub with n peers on wg0 (the
// interface of the recorded multi-wan snapshot).
func hubDump(n int) string {
	var b strings.Builder
	b.WriteString("wg0\t(hidden)\tAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\t51820\toff\n")
	for i := range n {
		fmt.Fprintf(&b, "wg0\t%043d=\t(none)\t198.18.%d.%d:51820\t10.%d.%d.%d/32\t1764547200\t%d\t%d\t25\n",
			i, i/250%250, i%250+1, i>>16&255, i>>8&255, i&255, i*1000, i*2000)
	}
	return b.String()
}

// dumpProber is a Prober whose targets answer "wg show all dump" with
// dumps[spec]: each collection parses its dump into the recorded multi-wan
// snapshot and renders it, as collectRound does after reading it.
func dumpProber(t *testing.T, dumps map[string]string, lim Limits) *Prober {
	t.Helper()
	p := NewProber(ProbeOptions{Allow: []string{"ssh:*"}, Limits: lim})
	p.collectFn = func(ctx context.Context, tg target.Target, _ time.Duration, pl peerLabels) *round {
		snap := readFixture(t, "multiwan-a.json")
		peers, err := parse.ParseWGDump(strings.NewReader(dumps[tg.String()]))
		if err != nil {
			return &round{err: err}
		}
		snap.WireGuard[0].Peers = peers[0].Peers
		peers = nil
		return renderRound(ctx, tg, snap, time.Second, check.Options{}, pl, p.opts.Limits)
	}
	return p
}

// heapPeak samples the heap until stop is called, which returns how far it
// grew above where it was at the start.
func heapPeak() (stop func() int64) {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-sampled
		return int64(peak.Load()) - int64(base.HeapAlloc)
	}
}

// serveSite serves s as the exporter command does (Serve: the connection
// cap, the write deadline) on a loopback port, until the test ends.
func serveSite(t *testing.T, s *Site) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, []net.Listener{ln}, s, "", nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestHubTooBigFailsItsScrapeNotTheProcess is issue 55's hole 1: a target
// whose "wg show all dump" fits the 8 MiB read budget (139,141 peers)
// rendered a 58 MB scrape and took the exporter to 285 MB; ten concurrent
// scrapes of one cached target 1.24 GB, eight clients that never read their
// answer 1.37 GB, against the unit's MemoryMax=64M. Under the unit's
// GOMEMLIMIT, the hub's collection fails on the series budget, and the
// largest hub the budget admits, scraped ten at once (gzipped, as
// Prometheus asks) while eight clients ask and never read, keeps the heap
// within what the unit allows: the answers share the rendered text.
func TestHubTooBigFailsItsScrapeNotTheProcess(t *testing.T) {
	hostile := bareDump(139_141)
	if len(hostile) > CollectionReadBudget {
		t.Fatalf("the hostile dump is %d bytes, more than the read budget: it would not be read", len(hostile))
	}
	// The largest hub within both budgets: 8 series a peer with its stale handshake findings.
	big := hubDump(3_500)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(unitMemoryLimit(t)))
	p := dumpProber(t, map[string]string{"ssh:root@hostile": hostile, "ssh:root@big": big}, Limits{})
	site := &Site{Prober: p, WriteTimeout: 2 * time.Second}
	addr := serveSite(t, site)
	base := "http://" + addr

	grown := heapPeak()
	code, body := get(t, probeURL(base, "ssh:root@hostile"))
	if code != http.StatusOK || sampleValue(t, body, "wgperf_collect_success") != 0 {
		t.Fatalf("the hub of 139,141 peers: HTTP %d, want a 200 with collect_success 0:\n%.2000s", code, body)
	}
	if n := sampleValue(t, body, "wgperf_collect_series"); n != DefaultMaxSeries+1 {
		t.Errorf("wgperf_collect_series %v, want one past the budget, %d", n, DefaultMaxSeries+1)
	}
	if strings.Contains(body, "wgperf_wireguard_peer") {
		t.Errorf("the failed hub serves peer series")
	}
	const most = 40 << 20 // the unit's GOMEMLIMIT; its MemoryMax leaves room for the runtime and binary
	if g := grown(); g > most {
		t.Errorf("the heap grew by %d MiB for the hub's scrape, want at most %d MiB", g>>20, most>>20)
	} else {
		t.Logf("the hub's scrape: the heap grew by %d MiB", g>>20)
	}

	// The big hub: collected once, then ten scrapes at once and eight
	// clients that never read.
	code, body = get(t, probeURL(base, "ssh:root@big"))
	if code != http.StatusOK || sampleValue(t, body, "wgperf_collect_success") != 1 {
		t.Fatalf("the hub of 3,500 peers: HTTP %d, want it collected:\n%.2000s", code, body)
	}
	size := len(body)
	grown = heapPeak()
	var stalled []net.Conn
	defer func() {
		for _, c := range stalled {
			c.Close()
		}
	}()
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, c)
		fmt.Fprintf(c, "GET /probe?target=ssh:root@big HTTP/1.1\r\nHost: %s\r\nAccept-Encoding: identity\r\n\r\n", addr)
	}
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, probeURL(base, "ssh:root@big"), nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("a concurrent scrape: %v, HTTP %d", err, resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	g := grown()
	// Ten copies of the answer alone were 10× its size; the text is shared.
	if most := int64(12 << 20); g > most {
		t.Errorf("the heap grew by %d MiB for ten scrapes and eight stalled clients of a %d KiB answer, want at most %d MiB", g>>20, size>>10, most>>20)
	} else {
		t.Logf("ten scrapes and eight stalled clients of a %d KiB answer: the heap grew by %d MiB", size>>10, g>>20)
	}
	// A client that never reads is let go at the write timeout: its
	// connection ends (the answer is cut short), where it stayed open.
	// Their answers were ready before the ten scrapes began.
	time.Sleep(site.WriteTimeout + 2*time.Second)
	for i, c := range stalled {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		n, err := io.Copy(io.Discard, bufio.NewReader(c))
		if int(n) >= size {
			t.Errorf("stalled client %d got the whole answer (%d bytes, %v)", i, n, err)
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("stalled client %d: the server kept its connection open for a minute", i)
		}
	}
}
