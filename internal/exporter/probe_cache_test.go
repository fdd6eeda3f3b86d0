package exporter

import (
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
)

// heldRounds are the targets whose collection the cache holds, and the
// bytes it counts for them.
func heldRounds(p *Prober) (specs []string, held int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for el := p.lru.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*probeEntry); e.held {
			specs = append(specs, e.spec)
		}
	}
	return specs, p.held
}

// The cache holds at most CacheBytes of rendered text: the least recently
// scraped targets' collections go (a later scrape collects them anew), and
// a collection older than the TTL is dropped at the next scrape of any
// target instead of being held until its target is scraped again (issue
// 55: the cache kept 512 entries and their stale rounds).
func TestProbeCacheIsBoundedInBytes(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	one := newRound(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), time.Second, peerLabels{roam: newRoamLimiter()}, Limits{}).size
	p, srv, clock := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, CacheBytes: 2*one + one/2}, nil, nil)
	for _, h := range []string{"r1", "r2", "r3"} {
		get(t, probeURL(srv, "ssh:root@"+h))
	}
	specs, held := heldRounds(p)
	if len(specs) != 2 || specs[0] != "ssh:root@r3" || specs[1] != "ssh:root@r2" || held != 2*one {
		t.Errorf("the cache holds %v (%d bytes), want r3 and r2 (%d bytes): r1 went for room", specs, held, 2*one)
	}
	if _, body := get(t, probeURL(srv, "ssh:root@r1")); sampleValue(t, body, "wgperf_collect_success") != 1 || p.runs.Load() != 4 {
		t.Errorf("r1 after it went: %d collections, want it collected again (4)", p.runs.Load())
	}
	if n := sampleValue(t, exposition(t, p.metrics()), "wgperf_probe_cache_bytes"); n != float64(2*one) {
		t.Errorf("wgperf_probe_cache_bytes %v, want %d", n, 2*one)
	}

	clock.Add(DefaultProbeCacheTTL)
	get(t, probeURL(srv, "ssh:root@r4"))
	if specs, held := heldRounds(p); len(specs) != 1 || specs[0] != "ssh:root@r4" || held != one {
		t.Errorf("past the TTL the cache holds %v (%d bytes), want only r4's fresh collection (%d bytes)", specs, held, one)
	}
	// A stale target keeps its place (and roaming memory), not its text.
	if n := len(p.entries); n != 4 {
		t.Errorf("the cache remembers %d targets, want 4", n)
	}
}

// A collection larger than the whole cache answers its scrape and is not held.
func TestProbeCacheHoldsNothingLargerThanItself(t *testing.T) {
	p, srv, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, CacheBytes: 100}, nil, nil)
	if _, body := get(t, probeURL(srv, "ssh:root@r1")); sampleValue(t, body, "wgperf_collect_success") != 1 {
		t.Fatalf("r1 not collected:\n%s", body)
	}
	if specs, held := heldRounds(p); len(specs) != 0 || held != 0 {
		t.Errorf("the cache of 100 bytes holds %v (%d bytes)", specs, held)
	}
}
