package exporter

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/target"
)

// Multi-target defaults: a scrape every 30 s of the same router from two
// Prometheus replicas shares one collection; a fleet of a few hundred routers
// fits the cache; a dead router costs one ssh connect timeout, not a pile of
// hanging ones.
const (
	DefaultProbeTimeout    = 20 * time.Second
	DefaultProbeCacheTTL   = 25 * time.Second
	DefaultProbeCacheSize  = 512
	DefaultProbeConcurrent = 8
	// MinProbeTimeout is the shortest collection a scrape's timeout header
	// can ask for.
	MinProbeTimeout = time.Second
)

// ProbeOptions tune a Prober.
type ProbeOptions struct {
	// Allow lists the targets /probe may collect: "local", "netns:GLOB" or
	// "ssh:[USER@]HOST[:PORT]", matched on the parsed target (allow.go: the
	// host label by label or as a prefix, 10.0.0.0/24; a part left out admits
	// any). A scraper can otherwise make a root process ssh anywhere with
	// root's keys, so nothing is allowed by default.
	Allow []string
	// Timeout bounds one collection; Prometheus' scrape timeout, when sent,
	// lowers it (to MinProbeTimeout at least). 0 means DefaultProbeTimeout.
	Timeout time.Duration
	// CacheTTL is how long a collection (or a failure) answers scrapes of
	// its target; 0 means DefaultProbeCacheTTL.
	CacheTTL time.Duration
	// CacheSize bounds the targets remembered; the least recently scraped
	// goes first. 0 means DefaultProbeCacheSize.
	CacheSize int
	// CacheBytes bounds the rendered text the cache holds for all its
	// targets together: past it, the least recently scraped targets'
	// collections are dropped (their next scrape collects anew). 0 means
	// DefaultProbeCacheBytes.
	CacheBytes int
	// Limits bound what one target's collection may render.
	Limits Limits
	// Concurrent bounds collections working at once; 0 means
	// DefaultProbeConcurrent. A collection that waits on a slow or
	// unreachable router gives its slot up after a quarter of its time, to
	// one of WaitingFactor×Concurrent slots for waiting ones (probe_slots.go).
	Concurrent int
	// SSHPersist keeps each ssh target's connection this long after its
	// collection, for the next scrape, at most CacheSize of them at once
	// (the least recently used ends first). 0: each collection is one ssh
	// connection of its own, closed with its remote shell, so nothing
	// lingers between scrapes. Otherwise at least a second (ssh's
	// ControlPersist counts seconds, and 0 there would mean forever).
	SSHPersist time.Duration
	// Checks, Names, MaxPeers, Logf and Now as in Options.
	Checks   check.Options
	Names    PeerNames
	MaxPeers int
	Logf     func(format string, args ...any)
	Now      func() time.Time
}

// Prober serves /probe?target=SPEC: it collects the target (over ssh for a
// router, which needs no wgperf binary), runs the passive checks and answers
// with the target's metrics, as the blackbox exporter does for its probes.
// Collections are cached per target for CacheTTL and shared by concurrent
// scrapes of the same target.
type Prober struct {
	opts  ProbeOptions
	rules []allowRule
	// ssh is how the targets' ssh connections live (SSHPersist); its pool,
	// if any, is the Prober's own, ended by Close.
	ssh target.SSHConns
	sem chan struct{} // working collections
	// waitSem holds collections that outlived a quarter of their time.
	waitSem chan struct{}

	mu      sync.Mutex
	entries map[string]*list.Element // spec -> *probeEntry in lru
	lru     *list.List               // front: most recently scraped
	held    int                      // bytes of text the entries' finished collections hold

	cached, collected, refused atomic.Uint64
	runs                       atomic.Uint64 // collections started

	// collectFn collects one target; tests replace it.
	collectFn func(ctx context.Context, t target.Target, timeout time.Duration, pl peerLabels) *round
}

// probeEntry is one target's latest collection; ready closes when it is
// done. An entry whose collection was dropped (stale, or for room) keeps
// only its spec and roaming memory, with ready nil: its next scrape collects.
type probeEntry struct {
	spec  string
	roam  *roamLimiter // survives re-collections, so roaming stays bounded
	ready chan struct{}
	r     *round
	at    time.Time // when the collection finished
	held  bool      // r.size counts in Prober.held (guarded by Prober.mu)
	// cutShort marks a failure that a scraper's shorter timeout caused: it
	// answers the scrapes that shared it and is never served from the cache,
	// so one scraper's header cannot fail the target for the others.
	cutShort bool
	// While the collection runs (guarded by Prober.mu): deadline is the
	// latest deadline of the scrapes waiting for it, which a scrape that
	// joins with a longer timeout moves later, and timeout the longest
	// timeout asked. A collection ends at its deadline, never at the first
	// scraper's: each scrape stops waiting at its own.
	deadline, started time.Time
	timeout           time.Duration
}

// ending reports a collection whose deadline has passed, so it is being cut
// short: a scrape that comes now cannot give it more time, so it waits for
// the end and collects anew. Prober.mu is held.
func (e *probeEntry) ending() bool { return !time.Now().Before(e.deadline) }

// NewProber returns a Prober; nothing is collected until a scrape asks.
func NewProber(opts ProbeOptions) *Prober {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultProbeTimeout
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = DefaultProbeCacheTTL
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultProbeCacheSize
	}
	if opts.Concurrent <= 0 {
		opts.Concurrent = DefaultProbeConcurrent
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultProbeCacheBytes
	}
	opts.Limits = opts.Limits.orDefault()
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Prober{opts: opts, sem: make(chan struct{}, opts.Concurrent),
		waitSem: make(chan struct{}, WaitingFactor*opts.Concurrent), entries: map[string]*list.Element{}, lru: list.New(),
		ssh: target.SSHConns{Own: true}}
	if opts.SSHPersist > 0 {
		p.ssh = target.SSHConns{Pool: target.NewSSHPool(opts.SSHPersist, opts.CacheSize)}
	}
	for _, pattern := range opts.Allow {
		if r, err := parseAllow(pattern); err == nil { // CheckAllow refused the others at start
			p.rules = append(p.rules, r)
		}
	}
	p.collectFn = func(ctx context.Context, t target.Target, timeout time.Duration, pl peerLabels) *round {
		return collectRound(ctx, t, timeout, opts.Now, opts.Checks, pl, opts.Limits)
	}
	return p
}

// Close ends the ssh connections the Prober holds for the next scrape
// (SSHPersist); a later scrape opens them anew.
func (p *Prober) Close() {
	if p.ssh.Pool != nil {
		p.ssh.Pool.Close()
	}
}

// CheckAllow validates allow patterns, so a typo fails at start, not per scrape.
func CheckAllow(patterns []string) error {
	for _, p := range patterns {
		if _, err := parseAllow(p); err != nil {
			return err
		}
	}
	return nil
}

func (p *Prober) allowed(spec target.Spec) bool {
	for _, r := range p.rules {
		if r.match(spec) {
			return true
		}
	}
	return false
}

// admit parses a /probe target and says whether the exporter may collect
// it: the status of a refusal (400 for a spec that is not one, 403 for one
// no --probe.allow pattern admits) and why.
func (p *Prober) admit(spec string) (target.Spec, int, error) {
	parsed, err := target.ParseSpec(spec)
	if err != nil {
		return target.Spec{}, statusBadRequest, err
	}
	// ssh splits user and host at the last "@": a user holding one reads as
	// an address to a person and as another host to ssh.
	if a, ok := parsed.SSH(); ok && strings.Contains(a.User, "@") {
		return target.Spec{}, statusBadRequest, fmt.Errorf("target %q: a user may not contain @ (want ssh:[user@]host[:port])", spec)
	}
	if !p.allowed(parsed) {
		return target.Spec{}, statusForbidden, fmt.Errorf("target %q is not allowed: start the exporter with --probe.allow matching it", spec)
	}
	return parsed, statusOK, nil
}

// answer is the reply to /probe?target=SPEC. A target that fails to collect
// is still a 200 with wgperf_collect_success 0 (Prometheus keeps up=1: the
// exporter answered; the alert on collect_success names the target).
// scrapeTimeout is Prometheus' X-Prometheus-Scrape-Timeout-Seconds header.
func (p *Prober) answer(ctx context.Context, query url.Values, scrapeTimeout string) reply {
	spec := query.Get("target")
	if spec == "" {
		p.refused.Add(1)
		return textReply(statusBadRequest, "target parameter missing: /probe?target=ssh:[user@]host[:port]")
	}
	parsed, status, err := p.admit(spec)
	if err != nil {
		p.refused.Add(1)
		return textReply(status, err.Error())
	}
	t, err := parsed.OpenWith(target.HostSSH{Conns: p.ssh})
	if err != nil {
		p.refused.Add(1)
		return textReply(statusBadRequest, err.Error())
	}
	r, at, err := p.get(ctx, t, p.collectTimeout(scrapeTimeout))
	if err != nil {
		return textReply(statusUnavailable, err.Error())
	}
	fams, err := probeFamilies(r, at)
	if err != nil {
		return textReply(statusInternalError, err.Error())
	}
	return reply{status: statusOK, contentType: contentType, parts: mergeFamilies(fams, r.families)}
}

// collectTimeout is how long a collection asked for by a scrape may take:
// Prometheus' X-Prometheus-Scrape-Timeout-Seconds header shortens
// opts.Timeout so the answer comes before Prometheus gives up (a slow router
// then reads as a failed collection rather than a down exporter), never below
// MinProbeTimeout; a header that is not a positive finite number is ignored.
func (p *Prober) collectTimeout(header string) time.Duration {
	v, err := strconv.ParseFloat(strings.TrimSpace(header), 64)
	if header == "" || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return p.opts.Timeout
	}
	v = max(v-0.5, v/2) // the answer still has to travel
	if v >= p.opts.Timeout.Seconds() {
		return p.opts.Timeout
	}
	return min(max(time.Duration(v*float64(time.Second)), MinProbeTimeout), p.opts.Timeout)
}

// get returns t's cached collection, or collects it: one collection per
// target at a time, whoever asks.
func (p *Prober) get(ctx context.Context, t target.Target, timeout time.Duration) (*round, time.Time, error) {
	spec := t.String()
	now := p.opts.Now()
	p.mu.Lock()
	p.dropStale(now)
	var e *probeEntry
	if el, ok := p.entries[spec]; ok {
		p.lru.MoveToFront(el)
		e = el.Value.(*probeEntry)
		switch {
		case e.ready == nil: // dropped: collect anew
			e = &probeEntry{spec: spec, roam: e.roam, ready: make(chan struct{})}
			el.Value = e
			p.start(t, e, timeout)
		case isDone(e.ready):
			if now.Sub(e.at) < p.opts.CacheTTL && !e.cutShort {
				p.mu.Unlock()
				p.cached.Add(1)
				return e.r, e.at, nil
			}
			// Stale: a new collection replaces it, keeping the roaming memory.
			p.release(e)
			e = &probeEntry{spec: spec, roam: e.roam, ready: make(chan struct{})}
			el.Value = e
			p.start(t, e, timeout)
		case e.ending():
			// Joining would serve this scrape the cut-short failure (and,
			// with the timeout it asks, cache it as a plain one).
			p.mu.Unlock()
			select {
			case <-e.ready:
				return p.get(ctx, t, timeout)
			case <-ctx.Done():
				return nil, time.Time{}, ctx.Err()
			}
		default: // being collected: wait for it, giving it this scrape's time
			// (never past the exporter's own timeout from its start)
			if d := time.Now().Add(timeout); d.After(e.deadline) {
				e.deadline = minTime(d, e.started.Add(p.opts.Timeout))
			}
			e.timeout = max(e.timeout, timeout)
		}
	} else {
		e = &probeEntry{spec: spec, roam: newRoamLimiter(), ready: make(chan struct{})}
		p.entries[spec] = p.lru.PushFront(e)
		for p.lru.Len() > p.opts.CacheSize {
			old := p.lru.Back()
			p.lru.Remove(old)
			p.release(old.Value.(*probeEntry))
			delete(p.entries, old.Value.(*probeEntry).spec)
		}
		p.start(t, e, timeout)
	}
	p.mu.Unlock()
	own := time.NewTimer(timeout)
	defer own.Stop()
	select {
	case <-e.ready:
		p.collected.Add(1)
		return e.r, e.at, nil
	case <-own.C:
		// The collection goes on for a scrape that gave it longer.
		p.collected.Add(1)
		return &round{took: timeout, err: fmt.Errorf("%s: not collected within this scrape's %s: %w", t, timeout, context.DeadlineExceeded)}, now, nil
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}

// start sets e's deadline and runs its collection; p.mu is held.
func (p *Prober) start(t target.Target, e *probeEntry, timeout time.Duration) {
	e.started = time.Now()
	e.deadline, e.timeout = e.started.Add(timeout), timeout
	ctx, cancel := context.WithCancel(context.Background())
	// The timer ends the collection at its deadline, as scrapes that join
	// move it.
	var stop *time.Timer
	stop = time.AfterFunc(timeout, func() {
		p.mu.Lock()
		left := time.Until(e.deadline)
		if left > 0 {
			stop.Reset(left)
		}
		p.mu.Unlock()
		if left <= 0 {
			cancel()
		}
	})
	go func() {
		defer cancel()
		defer stop.Stop()
		p.collect(joinCtx{ctx, p, e}, t, e)
	}()
}

// isDone says whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// release stops counting e's collection in p.held; p.mu is held.
func (p *Prober) release(e *probeEntry) {
	if e.held {
		p.held -= e.r.size
		e.held = false
	}
}

// drop replaces el's finished collection with an entry that keeps only its
// roaming memory, so the collection's text can go; p.mu is held.
func (p *Prober) drop(el *list.Element) {
	e := el.Value.(*probeEntry)
	p.release(e)
	el.Value = &probeEntry{spec: e.spec, roam: e.roam}
}

// dropStale drops the finished collections older than CacheTTL: a target
// no one scrapes any more holds nothing but its name; p.mu is held.
func (p *Prober) dropStale(now time.Time) {
	for el := p.lru.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*probeEntry); e.ready != nil && isDone(e.ready) && now.Sub(e.at) >= p.opts.CacheTTL {
			p.drop(el)
		}
	}
}

// keep counts e's finished collection in p.held and, past CacheBytes,
// drops the least recently scraped collections (e's last); p.mu is held.
func (p *Prober) keep(e *probeEntry) {
	el, ok := p.entries[e.spec]
	if !ok || el.Value != e || e.r.size == 0 {
		return // evicted while it ran, or nothing to hold
	}
	p.held += e.r.size
	e.held = true
	for el := p.lru.Back(); el != nil && p.held > p.opts.CacheBytes; el = el.Prev() {
		if o := el.Value.(*probeEntry); o != e && o.held {
			p.drop(el)
		}
	}
	if p.held > p.opts.CacheBytes {
		p.drop(el)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// joinCtx is a collection's context: done at its entry's deadline, which
// it reports as that deadline moves (a context.WithTimeout below it keeps
// the later one), and ended by it (DeadlineExceeded), never cancelled.
type joinCtx struct {
	context.Context
	p *Prober
	e *probeEntry
}

func (c joinCtx) Deadline() (time.Time, bool) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.e.deadline, true
}

func (c joinCtx) Err() error {
	if c.Context.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// collect runs in its own goroutine so a scraper that hangs up does not
// abandon a collection others are waiting for.
// ctx ends at the entry's deadline. The collection itself gets the
// exporter's whole timeout: ctx cuts it sooner.
func (p *Prober) collect(ctx context.Context, t target.Target, e *probeEntry) {
	start := p.opts.Now()
	var r *round
	deadline, _ := ctx.Deadline()
	if release, ok := p.takeSlot(ctx, deadline); ok {
		p.runs.Add(1)
		r = p.collectFn(ctx, t, p.opts.Timeout-p.opts.Now().Sub(start), peerLabels{names: p.opts.Names, roam: e.roam, max: p.opts.MaxPeers})
		release()
	} else {
		r = &round{err: fmt.Errorf("%s: %d collections already running: %w", t, cap(p.sem)+cap(p.waitSem), ctx.Err())}
	}
	r.took = p.opts.Now().Sub(start)
	if r.err != nil {
		p.opts.Logf("probe %v", r.err)
	}
	p.mu.Lock()
	e.cutShort = r.err != nil && ctx.Err() != nil && e.timeout < p.opts.Timeout
	e.r, e.at = r, p.opts.Now()
	close(e.ready)
	p.keep(e)
	p.mu.Unlock()
}

// probeFamilies is a probe's own part of the answer: whether the target's
// collection worked, how long it took and when it finished.
func probeFamilies(r *round, at time.Time) ([]family, error) {
	success := 0.0
	if r.err == nil {
		success = 1
	}
	own := []metric{
		constMetric(descCollectSuccess, gauge, success),
		constMetric(descCollectDuration, gauge, r.took.Seconds()),
	}
	if r.series > 0 {
		own = append(own, constMetric(descCollectSeries, gauge, float64(r.series)))
	}
	if r.err == nil {
		own = append(own, constMetric(descCollectTimestamp, gauge, unixSeconds(at)))
	}
	return gather(own)
}

// metrics are the Prober's own counters, for the exporter's /metrics.
func (p *Prober) metrics() []metric {
	p.mu.Lock()
	n, held := p.lru.Len(), p.held
	p.mu.Unlock()
	return []metric{
		constMetric(descProbes, counter, float64(p.cached.Load()), "cached"),
		constMetric(descProbes, counter, float64(p.collected.Load()), "collected"),
		constMetric(descProbes, counter, float64(p.refused.Load()), "refused"),
		constMetric(descProbeCacheSize, gauge, float64(n)),
		constMetric(descProbeCacheBytes, gauge, float64(held)),
	}
}
