package exporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// TestDeadRoutersCostTheirOwnScrapes: two routers that never answer hold
// both working slots of an exporter with Concurrent 2; the healthy routers
// scraped meanwhile are still collected (their collect_success is 1),
// while the dead ones fail at their own timeout.
func TestDeadRoutersCostTheirOwnScrapes(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Concurrent: 2}, nil, nil)
	healthy := p.collectFn
	started := make(chan struct{}, 2)
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		if tg.String() == "ssh:dead1" || tg.String() == "ssh:dead2" {
			started <- struct{}{}
			<-ctx.Done() // ssh's connect timeout, cut by the scrape's
			return &round{err: fmt.Errorf("%s: ssh: connect to host: Connection timed out", tg)}
		}
		return healthy(ctx, tg, timeout, pl)
	}
	scrape := func(spec string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, probeURL(srv, spec), nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "4")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	var wg sync.WaitGroup
	deadBodies := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, deadBodies[i], _ = scrape(fmt.Sprintf("ssh:dead%d", i+1))
		}()
	}
	<-started
	<-started
	for i := range 4 {
		spec := fmt.Sprintf("ssh:router%d", i)
		code, body, err := scrape(spec)
		if err != nil || code != http.StatusOK || sampleValue(t, body, "wgperf_collect_success") != 1 {
			t.Errorf("%s scraped while 2 dead routers ran: HTTP %d, %v, collect_success not 1:\n%.600s", spec, code, err, body)
		}
	}
	wg.Wait()
	for i, body := range deadBodies {
		if sampleValue(t, body, "wgperf_collect_success") != 0 {
			t.Errorf("dead router %d: collect_success not 0:\n%.600s", i+1, body)
		}
	}
}

// TestQueuedCollectionsSpillToWaitingSlots: with one working slot, five
// routers scraped at once whose collections each take 0.8 s (less than a
// quarter of their time, so none moves on by itself) would queue past their
// 3.5 s; those queued a quarter of their time run in the waiting slots, so
// all five are collected, never more than 1+WaitingFactor at once.
func TestQueuedCollectionsSpillToWaitingSlots(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Concurrent: 1}, nil, nil)
	healthy := p.collectFn
	var mu sync.Mutex
	running, most := 0, 0
	p.collectFn = func(ctx context.Context, tg target.Target, timeout time.Duration, pl peerLabels) *round {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select {
		case <-time.After(800 * time.Millisecond):
		case <-ctx.Done():
			return &round{err: ctx.Err()}
		}
		return healthy(ctx, tg, timeout, pl)
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, probeURL(srv, fmt.Sprintf("ssh:router%d", i)), nil)
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "4")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if sampleValue(t, string(b), "wgperf_collect_success") != 1 {
				t.Errorf("router%d queued behind the others: not collected:\n%.400s", i, b)
			}
		}()
	}
	wg.Wait()
	if most > 1+WaitingFactor || most < 2 {
		t.Errorf("%d collections ran at once, want 2 to %d", most, 1+WaitingFactor)
	}
}
