package exporter

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
)

// fakeClock is a settable clock shared by a Prober and its fake collections.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeProber serves the recorded multi-wan snapshot for every target, or
// fails for targets named in fail; gate, when set, holds collections until closed.
func fakeProber(t *testing.T, opts ProbeOptions, fail map[string]bool, gate chan struct{}) (*Prober, string, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)}
	opts.Now = clock.Now
	snap := readFixture(t, "multiwan-a.json")
	p := NewProber(opts)
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return &round{err: ctx.Err()}
			}
		}
		if fail[tg.String()] {
			return &round{err: errors.New(tg.String() + ": ssh: connect to host: Connection refused")}
		}
		return newRound(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), 1200*time.Millisecond, pl)
	}
	return p, testServer(t, &Site{Prober: p}), clock
}

// probeURL is the /probe URL of spec on the server at base.
func probeURL(base, spec string) string {
	return base + "/probe?target=" + url.QueryEscape(spec)
}

func get(t *testing.T, u string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestProbeRefusesWhatItMustNotCollect(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:root@r*"}}, nil, nil)
	for _, tc := range []struct {
		spec string
		code int
	}{
		{"", http.StatusBadRequest},
		{"ssh:-oProxyCommand=touch /tmp/x", http.StatusBadRequest}, // target.Parse refuses ssh options
		{"ftp:router", http.StatusBadRequest},
		{"ssh:root@elsewhere", http.StatusForbidden},
		{"local", http.StatusForbidden},
		{"ssh:root@r1", http.StatusOK},
	} {
		if code, body := get(t, probeURL(srv, tc.spec)); code != tc.code {
			t.Errorf("target %q: HTTP %d, want %d: %s", tc.spec, code, tc.code, body)
		}
	}
	if got := p.refused.Load(); got != 5 {
		t.Errorf("refused counter %d, want 5", got)
	}
	if got := p.runs.Load(); got != 1 {
		t.Errorf("%d collections ran, want 1 (refused targets must not be collected)", got)
	}
}

// Two Prometheus replicas and a dashboard scraping one router at once share
// one collection, later scrapes within the TTL share it too, and a scrape
// after the TTL collects again.
func TestProbeCachesAndSharesCollections(t *testing.T) {
	gate := make(chan struct{})
	p, srv, clock := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, CacheTTL: 30 * time.Second}, nil, gate)
	var wg sync.WaitGroup
	bodies := make([]string, 4)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, bodies[i] = get(t, probeURL(srv, "ssh:root@r1"))
		}()
	}
	// Let every scrape arrive before the collection may finish.
	for deadline := time.Now().Add(5 * time.Second); p.runs.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	close(gate)
	wg.Wait()
	if got := p.runs.Load(); got != 1 {
		t.Fatalf("4 concurrent scrapes ran %d collections, want 1", got)
	}
	for i, b := range bodies {
		if sampleValue(t, b, "wgperf_collect_success") != 1 || !strings.Contains(b, "wgperf_wireguard_peer_info{") {
			t.Errorf("scrape %d:\n%s", i, b)
		}
	}
	clock.Add(29 * time.Second)
	get(t, probeURL(srv, "ssh:root@r1"))
	if got := p.runs.Load(); got != 1 {
		t.Errorf("scrape within the TTL collected again (%d collections)", got)
	}
	clock.Add(2 * time.Second)
	get(t, probeURL(srv, "ssh:root@r1"))
	if got := p.runs.Load(); got != 2 {
		t.Errorf("scrape after the TTL: %d collections, want 2", got)
	}
	if c, w := p.cached.Load(), p.collected.Load(); c != 1 || w != 5 {
		t.Errorf("cached %d, collected %d requests; want 1 and 5", c, w)
	}
}

// The cache holds at most CacheSize targets, dropping the least recently scraped.
func TestProbeCacheIsBounded(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, CacheSize: 3}, nil, nil)
	for _, h := range []string{"r1", "r2", "r3", "r1", "r4"} {
		get(t, probeURL(srv, "ssh:root@"+h))
	}
	p.mu.Lock()
	var specs []string
	for el := p.lru.Front(); el != nil; el = el.Next() {
		specs = append(specs, el.Value.(*probeEntry).spec)
	}
	p.mu.Unlock()
	if want := "ssh:root@r4 ssh:root@r1 ssh:root@r3"; strings.Join(specs, " ") != want {
		t.Errorf("cache holds %v, want %s (r2 scraped least recently)", specs, want)
	}
	get(t, probeURL(srv, "ssh:root@r2"))
	if got := p.runs.Load(); got != 5 {
		t.Errorf("%d collections, want 5 (r2 was evicted and collected again)", got)
	}
}

// A router that does not answer is a 200 with collect_success 0, so
// Prometheus keeps the exporter up and the target alert names the router.
func TestProbeFailedTarget(t *testing.T) {
	_, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}}, map[string]bool{"ssh:root@dead": true}, nil)
	code, body := get(t, probeURL(srv, "ssh:root@dead"))
	if code != http.StatusOK || sampleValue(t, body, "wgperf_collect_success") != 0 {
		t.Fatalf("HTTP %d:\n%s", code, body)
	}
	if strings.Contains(body, "wgperf_wireguard") || strings.Contains(body, "wgperf_collect_timestamp_seconds") {
		t.Errorf("a failed collection serves host metrics:\n%s", body)
	}
}

// Prometheus' scrape timeout caps the collection, so a slow router reads as
// a failed collection, not as a down exporter.
func TestProbeHonoursScrapeTimeout(t *testing.T) {
	gate := make(chan struct{}) // never opened: the collection hangs
	_, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Timeout: time.Minute}, nil, gate)
	start := time.Now()
	code, body := get(t, probeURL(srv, "ssh:root@slow"), "X-Prometheus-Scrape-Timeout-Seconds", "1.5")
	if took := time.Since(start); took > 1500*time.Millisecond || code != http.StatusOK {
		t.Fatalf("answered after %s with HTTP %d, want a failure before the 1.5 s scrape timeout:\n%s", took, code, body)
	}
	if sampleValue(t, body, "wgperf_collect_success") != 0 {
		t.Errorf("hung collection reported as a success:\n%s", body)
	}
}
