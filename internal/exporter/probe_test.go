package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
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
		return newRound(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), 1200*time.Millisecond, pl, Limits{})
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

// The allow-list judges what ssh will dial (user, host, port), not the text
// of the spec: a second "@" or a longer host name must not slip through a
// pattern that reads right to a person.
func TestProbeAllowMatchesParsedTarget(t *testing.T) {
	allow := []string{"ssh:root@10.0.0.*", "ssh:*@gw-?.example.net:2222", "ssh:admin@192.168.8.0/24", "ssh:[fd00::1]", "netns:site-*", "ssh:ops@*"}
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: allow}, nil, nil)
	for _, tc := range []struct {
		spec string
		code int
	}{
		{"ssh:root@10.0.0.5", http.StatusOK},
		{"ssh:root@10.0.0.5:2200", http.StatusOK},                 // no port in the pattern: any port
		{"ssh:root@10.0.0.1@evil.example", http.StatusBadRequest}, // user "root@10.0.0.1", host evil.example
		{"ssh:root@10.0.0.5.evil.example", http.StatusForbidden},  // * stays inside one label
		{"ssh:10.0.0.5", http.StatusForbidden},                    // no user: the ssh config's, not root
		{"ssh:admin@10.0.0.5", http.StatusForbidden},
		{"ssh:gw-1.example.net:2222", http.StatusOK},
		{"ssh:deploy@gw-2.example.net:2222", http.StatusOK},
		{"ssh:deploy@gw-2.example.net", http.StatusForbidden}, // port 22, not 2222
		{"ssh:deploy@gw-2.example.net.evil:2222", http.StatusForbidden},
		{"ssh:admin@192.168.8.200", http.StatusOK},
		{"ssh:admin@192.168.9.1", http.StatusForbidden},
		{"ssh:admin@router.lan", http.StatusForbidden}, // a prefix admits addresses, not names
		{"ssh:[fd00::1]", http.StatusOK},
		{"ssh:[fd00:0::1]:22", http.StatusOK}, // the same address spelled otherwise
		{"ssh:[fd00::2]", http.StatusForbidden},
		{"netns:site-a", http.StatusOK},
		{"netns:other", http.StatusForbidden},
		{"ssh:ops@anything.example", http.StatusOK},
		{"local", http.StatusForbidden},
	} {
		if code, body := get(t, probeURL(srv, tc.spec)); code != tc.code {
			t.Errorf("target %q: HTTP %d, want %d: %s", tc.spec, code, tc.code, body)
		}
	}
	if got := p.runs.Load(); got != 9 {
		t.Errorf("%d collections, want 9 (one per admitted target)", got)
	}
	for _, bad := range []string{"ssh:root@a@b", "ssh:root@[fd00::1", "ssh:h:99999", "ssh:fd00::*", "ssh:10.0.0.0/33", "http:x", "netns:", "ssh:[a-"} {
		if err := CheckAllow([]string{bad}); err == nil {
			t.Errorf("CheckAllow(%q) accepted a bad pattern", bad)
		}
	}
}

// A scrape's X-Prometheus-Scrape-Timeout-Seconds header can shorten a
// collection, within bounds: a nanosecond or +Inf must not make the
// collection fail at once.
func TestProbeScrapeTimeoutIsClamped(t *testing.T) {
	p, srv, clock := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Timeout: 20 * time.Second}, nil, nil)
	var mu sync.Mutex
	var got time.Duration
	inner := p.collectFn
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		deadline, _ := ctx.Deadline()
		mu.Lock()
		got = time.Until(deadline).Round(100 * time.Millisecond)
		mu.Unlock()
		return inner(ctx, tg, timeout, pl)
	}
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"0.000000001", MinProbeTimeout},
		{"+Inf", 20 * time.Second},
		{"NaN", 20 * time.Second},
		{"-3", 20 * time.Second},
		{"1e300", 20 * time.Second},
		{"soon", 20 * time.Second},
		{"10", 9500 * time.Millisecond},
	} {
		clock.Add(time.Hour) // past the cache TTL: every scrape collects
		code, body := get(t, probeURL(srv, "ssh:root@r1"), "X-Prometheus-Scrape-Timeout-Seconds", tc.header)
		mu.Lock()
		d := got
		mu.Unlock()
		if code != http.StatusOK || sampleValue(t, body, "wgperf_collect_success") != 1 {
			t.Errorf("header %q: HTTP %d, collection failed:\n%s", tc.header, code, body)
		}
		if d < tc.want-200*time.Millisecond || d > tc.want {
			t.Errorf("header %q: the collection got %s, want %s", tc.header, d, tc.want)
		}
	}
}

// A collection that failed because one scraper asked for a short timeout
// answers that scrape only: the next scraper collects again instead of
// being served the failure for the cache TTL.
func TestProbeDeadlineFailureIsNotCached(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Timeout: 20 * time.Second, CacheTTL: time.Hour}, nil, nil)
	var slow atomic.Bool
	slow.Store(true)
	inner := p.collectFn
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		if slow.Load() {
			<-ctx.Done() // a router slower than the scraper's timeout
			return &round{err: fmt.Errorf("%s: %w", tg, ctx.Err())}
		}
		return inner(ctx, tg, timeout, pl)
	}
	_, body := get(t, probeURL(srv, "ssh:root@r1"), "X-Prometheus-Scrape-Timeout-Seconds", "0.000000001")
	if sampleValue(t, body, "wgperf_collect_success") != 0 {
		t.Fatalf("the cut-short collection reads as a success:\n%s", body)
	}
	slow.Store(false)
	_, body = get(t, probeURL(srv, "ssh:root@r1"))
	if sampleValue(t, body, "wgperf_collect_success") != 1 || p.runs.Load() != 2 {
		t.Errorf("the next scrape was served the cut-short failure (%d collections):\n%s", p.runs.Load(), body)
	}
	// A failure under the exporter's own timeout is cached as before.
	_, body = get(t, probeURL(srv, "ssh:root@r1"))
	if p.runs.Load() != 2 || sampleValue(t, body, "wgperf_collect_success") != 1 {
		t.Errorf("a successful collection was not cached (%d collections)", p.runs.Load())
	}
}

// A scrape that comes after a collection's deadline passed, while the
// collection is still ending, must not join it: it would be served the
// cut-short failure, and the timeout it asks would have the failure cached
// as a plain one (a loaded CI machine hit that window).
func TestScrapeAfterTheDeadlineCollectsAnew(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Timeout: 20 * time.Second, CacheTTL: time.Hour}, nil, nil)
	var slow atomic.Bool
	slow.Store(true)
	cutShort, release := make(chan struct{}), make(chan struct{})
	inner := p.collectFn
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		if slow.Load() {
			<-ctx.Done()
			close(cutShort)
			<-release // still ending when the next scrape comes
			return &round{err: fmt.Errorf("%s: %w", tg, ctx.Err())}
		}
		return inner(ctx, tg, timeout, pl)
	}
	go func() {
		req, _ := http.NewRequest(http.MethodGet, probeURL(srv, "ssh:root@r1"), nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "0.000000001")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-cutShort
	slow.Store(false)
	go func() {
		time.Sleep(50 * time.Millisecond) // the next scrape finds the collection ending
		close(release)
	}()
	_, body := get(t, probeURL(srv, "ssh:root@r1"))
	if sampleValue(t, body, "wgperf_collect_success") != 1 || p.runs.Load() != 2 {
		t.Errorf("the scrape after the deadline was served the cut-short failure (%d collections):\n%s", p.runs.Load(), body)
	}
}

// An allow pattern that reads as an address (issue 41, hole 6) admits
// addresses only: 10.0.0.* must not admit the names 10.0.0.com,
// 10.0.0.localhost or 10.0.0., which DNS or the ssh config resolve anywhere.
func TestProbeAllowAddressPatternAdmitsAddressesOnly(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		admit   []string
		refuse  []string
	}{
		{"ssh:root@10.0.0.*", []string{"ssh:root@10.0.0.5", "ssh:root@10.0.0.255:2222"},
			[]string{"ssh:root@10.0.0.com", "ssh:root@10.0.0.localhost", "ssh:root@10.0.0.", "ssh:root@10.0.0.5x", "ssh:root@10.0.0.010", "ssh:root@10.0.0.300"}},
		{"ssh:*@192.168.[0-9].1", []string{"ssh:a@192.168.3.1"}, []string{"ssh:a@192.168.3.1.nip", "ssh:a@192.168.x.1"}},
		{"ssh:ops@*.example.net", []string{"ssh:ops@gw.example.net"}, []string{"ssh:ops@10.0.0.1"}},
		{"ssh:ops@gw-*", []string{"ssh:ops@gw-1"}, nil},
	} {
		r, err := parseAllow(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range tc.admit {
			if !r.admits(spec) {
				t.Errorf("%s refuses %s", tc.pattern, spec)
			}
		}
		for _, spec := range tc.refuse {
			if r.admits(spec) {
				t.Errorf("%s admits %s", tc.pattern, spec)
			}
		}
	}
	for _, bad := range []string{"ssh:10.0.*", "ssh:root@10.*"} {
		if err := CheckAllow([]string{bad}); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckAllow(%q): %v, want a one-line refusal", bad, err)
		}
	}
}

// A scrape's deadline is its own (issue 41, hole 7): a scraper with a 1 s
// timeout starts a collection, a second scraper with the default timeout
// joins it; the first is answered with a failure at its 1 s, the second
// with the collection, which goes on for it, once.
func TestProbeJoinKeepsItsOwnDeadline(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Timeout: 20 * time.Second}, nil, nil)
	started := make(chan struct{})
	var once sync.Once
	inner := p.collectFn
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		once.Do(func() { close(started) })
		select {
		case <-time.After(2 * time.Second): // a router slower than the first scraper's timeout
		case <-ctx.Done():
			return &round{err: fmt.Errorf("%s: %w", tg, ctx.Err())}
		}
		return inner(ctx, tg, timeout, pl)
	}
	var short string
	var shortTook time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		_, short = get(t, probeURL(srv, "ssh:root@r1"), "X-Prometheus-Scrape-Timeout-Seconds", "1.5")
		shortTook = time.Since(start)
	}()
	<-started
	_, long := get(t, probeURL(srv, "ssh:root@r1"))
	<-done
	if sampleValue(t, long, "wgperf_collect_success") != 1 {
		t.Errorf("the joining scrape was failed by the other's 1 s timeout:\n%s", long)
	}
	if sampleValue(t, short, "wgperf_collect_success") != 0 || shortTook > 1800*time.Millisecond {
		t.Errorf("the 1 s scrape answered after %s:\n%s", shortTook, short)
	}
	if n := p.runs.Load(); n != 1 {
		t.Errorf("%d collections, want 1 shared", n)
	}
}
