// Package exporter serves one host's WireGuard peers, the kernel counters that
// explain a slow tunnel, and the findings of wgperf's passive checks as
// Prometheus metrics, so a problem like a multi-WAN router's endpoint route
// stuck on the backup uplink raises an alert the moment it appears instead of
// two months later.
//
// Collection and checks run in the background every interval, and the metrics
// of each collection are gathered and rendered once, when it finishes; a scrape
// only writes that text out, so it stays cheap however often Prometheus asks and
// however slow the host is to answer. What a collection may render and the cache
// may hold is bounded (budget.go). The full build serves /metrics through
// Prometheus' client library (metrics_lib.go: its registry, content
// negotiation and process and Go collectors) from the samples the latest
// collection kept; /probe, and every page of the router build, which links
// neither net/http nor the library, are written by the text exposition
// writer here (expo.go), from text each collection rendered once, and served
// by serve_http.go or the router build's small server (tinyhttp.go).
package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wgperf/wgperf/internal/buildinfo"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
)

// DefaultInterval is how often the host is collected and checked.
const DefaultInterval = 30 * time.Second

// Options tune an Exporter.
type Options struct {
	// Interval between collections; 0 means DefaultInterval.
	Interval time.Duration
	// Checks are the assumptions handed to the passive checks.
	Checks check.Options
	// Logf reports failed collections; nil discards them.
	Logf func(format string, args ...any)
	// Now stamps collections; nil means time.Now.
	Now func() time.Time
	// Names gives peers a friendly name label (see ReadPeerNames).
	Names PeerNames
	// MaxPeers bounds the peers of an interface that have series of their
	// own (--collector.peers.max, see exportedPeers); 0 means every peer.
	MaxPeers int
	// Version is reported by wgperf_build_info.
	Version string
	// Drops counts the host's kernel drops by reason (--collector.drops); nil for none.
	Drops drops.Sampler
	// Limits bound what a collection may render (budget.go).
	Limits Limits
}

// Exporter watches one host. Its host metrics are gathered and rendered when
// a collection finishes; a scrape (WriteMetrics) adds its own health metrics.
type Exporter struct {
	target target.Target
	opts   Options
	latest atomic.Pointer[round]
	roam   *roamLimiter

	collections atomic.Uint64
	failures    atomic.Uint64
}

// round is the outcome of one collection: the metrics it produced, or why not.
type round struct {
	families []family // host metrics, gathered and rendered; nil when the collection failed or kept samples; read-only once stored
	samples  []metric // host metrics unrendered, when the collection kept them instead (Limits.keepSamples); read-only once stored
	series   int      // host series the collection had (past the budget too); 0 when none was counted
	size     int      // bytes of the families' text
	took     time.Duration
	err      error
	lastOK   time.Time // the latest successful collection, kept across failures
}

// New returns an Exporter for t. Nothing is collected until Refresh or Run.
func New(t target.Target, opts Options) *Exporter {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Limits = opts.Limits.orDefault()
	opts.Limits.keepSamples = keepHostSamples
	return &Exporter{target: t, opts: opts, roam: newRoamLimiter()}
}

// Run collects at once and then every interval until ctx ends.
func (e *Exporter) Run(ctx context.Context) {
	tick := time.NewTicker(e.opts.Interval)
	defer tick.Stop()
	for {
		if err := e.Refresh(ctx); err != nil && ctx.Err() == nil {
			e.opts.Logf("%v", err) // collect names the target
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Refresh collects the host once, runs the passive checks and replaces the
// metrics scrapes see. A failed collection drops the host metrics rather than
// serving stale ones as current; wgperf_collect_success says so.
func (e *Exporter) Refresh(ctx context.Context) error {
	// A collection must finish before the next one is due.
	r := collectRound(ctx, e.target, min(e.opts.Interval, 30*time.Second), e.opts.Now, e.opts.Checks, e.labels(), e.opts.Limits)
	e.publish(r)
	return r.err
}

func (e *Exporter) labels() peerLabels {
	return peerLabels{names: e.opts.Names, roam: e.roam, max: e.opts.MaxPeers}
}

// ReadBudget is what all the exporter's collections running at once (its
// host's and /probe's, working or waiting: probe_slots.go) may read from their
// hosts together, and CollectionReadBudget what one of them may: a target
// that prints without end (40 MiB per command) fails its own collection at
// its share, and the process stays within the packaged unit's MemoryMax=64M
// (deploy/systemd/wgperf-exporter.service) and a 128 MiB OpenWrt router's
// RAM. Real routers print a few hundred KiB; a large banIP ruleset a few MiB.
const (
	ReadBudget           = 16 << 20
	CollectionReadBudget = 8 << 20
)

// readPool holds ReadBudget for every collection of the process.
var readPool = target.NewReadPool(ReadBudget)

// collectRound collects t once within timeout and runs the passive checks.
// Its reads draw from readPool, given back when it returns.
func collectRound(ctx context.Context, t target.Target, timeout time.Duration, now func() time.Time, opts check.Options, pl peerLabels, lim Limits) *round {
	ctx, release := readPool.Use(ctx)
	defer release()
	ctx = target.WithReadBudget(ctx, CollectionReadBudget)
	start := now()
	snap, err := collect.Collect(ctx, t, collect.Options{Timeout: timeout, Now: now})
	took := now().Sub(start)
	if err != nil {
		return &round{took: took, err: err}
	}
	return renderRound(ctx, t, snap, took, opts, pl, lim)
}

// renderRound runs the passive checks on t's collection and turns it into
// metrics, in one of renderSlots.
func renderRound(ctx context.Context, t target.Target, snap *facts.Snapshot, took time.Duration, opts check.Options, pl peerLabels, lim Limits) *round {
	select {
	case renderSem <- struct{}{}:
		defer func() { <-renderSem }()
	case <-ctx.Done():
		return &round{took: took, err: fmt.Errorf("%s: %d collections already being rendered: %w", t, renderSlots, ctx.Err())}
	}
	r := newRound(snap, check.Run([]*facts.Snapshot{snap}, opts), took, pl, lim)
	if r.err != nil {
		r.err = fmt.Errorf("%s: %w", t, r.err)
	}
	return r
}

// newRound turns a successful collection into the metrics scrapes serve,
// within lim: a host over it fails its collection instead.
func newRound(snap *facts.Snapshot, res check.Result, took time.Duration, pl peerLabels, lim Limits) *round {
	lim = lim.orDefault()
	ms, full := hostMetricsWithin(snap, res, pl, lim.Series)
	if full {
		return &round{took: took, series: lim.Series + 1, err: seriesError(lim.Series)}
	}
	r := &round{took: took, series: len(ms)}
	var err error
	if r.families, err = gatherWithin(ms, lim.Bytes); err != nil {
		if errors.Is(err, errOverBudget) {
			return &round{took: took, series: len(ms), err: err}
		}
		// hostMetrics keeps series unique; this is a bug worth seeing in the metrics.
		return &round{took: took, err: fmt.Errorf("gather metrics: %w", err)}
	}
	for _, f := range r.families {
		r.size += len(f.text)
	}
	if lim.keepSamples {
		// Rendered above for the budget and the checks on repeats only.
		r.families, r.samples = nil, ownSamples(ms)
	}
	r.lastOK = snap.CollectedAt
	return r
}

// store publishes a collection's outcome to scrapes (tests feed it snapshots).
func (e *Exporter) store(snap *facts.Snapshot, res check.Result, took time.Duration, err error) {
	if err != nil {
		e.publish(&round{took: took, err: err})
		return
	}
	e.publish(newRound(snap, res, took, e.labels(), e.opts.Limits))
}

// publish makes r what scrapes see, keeping the time of the last success.
func (e *Exporter) publish(r *round) {
	e.collections.Add(1)
	if prev := e.latest.Load(); prev != nil && r.err != nil {
		r.lastOK = prev.lastOK
	}
	if r.err != nil {
		e.failures.Add(1)
	}
	e.latest.Store(r)
}

// selfMetrics is the exporter's own health: did the latest collection work,
// how long did it take, when did one last succeed.
func (e *Exporter) selfMetrics() []metric {
	r := e.latest.Load()
	success := 0.0
	if r != nil && r.err == nil {
		success = 1
	}
	out := []metric{
		constMetric(descCollectSuccess, gauge, success),
		constMetric(descCollections, counter, float64(e.collections.Load())),
		constMetric(descCollectFailures, counter, float64(e.failures.Load())),
	}
	if r == nil {
		return out
	}
	out = append(out, constMetric(descCollectDuration, gauge, r.took.Seconds()))
	if r.series > 0 {
		out = append(out, constMetric(descCollectSeries, gauge, float64(r.series)))
	}
	if !r.lastOK.IsZero() {
		out = append(out, constMetric(descCollectTimestamp, gauge, unixSeconds(r.lastOK)))
	}
	return out
}

// writeMetrics writes the exporter's own metrics and extra samples of the
// moment (the process's, a Prober's counters), gathered now, with the host
// metrics of the latest collection, in the text format.
func (e *Exporter) writeMetrics(w io.Writer, extra ...metric) error {
	parts, err := e.metricsParts(append(e.selfMetrics(), append(extra, dropMetrics(context.Background(), e.opts.Drops)...)...)...)
	if err != nil {
		return err
	}
	return writeFamilies(w, parts)
}

// metricsParts are the families of the samples of the moment (own) and of
// the host, the host's shared with the latest collection when it rendered
// them (not copied).
func (e *Exporter) metricsParts(own ...metric) ([]family, error) {
	fams, err := gather(own)
	if err != nil {
		return nil, err
	}
	var host []family
	if r := e.latest.Load(); r != nil {
		host = r.families
		if r.samples != nil {
			if host, err = gather(r.samples); err != nil {
				return nil, err
			}
		}
	}
	return mergeFamilies(fams, host), nil
}

// ownSamples is a copy of ms that holds nothing of the collection it came
// from: label values that are substrings of a target's output would keep
// all of that output alive for the interval. Equal values share one copy.
func ownSamples(ms []metric) []metric {
	n := 0
	for _, m := range ms {
		n += len(m.labels)
	}
	labels := make([]string, 0, n)
	seen := map[string]string{}
	out := make([]metric, len(ms))
	for i, m := range ms {
		start := len(labels)
		for _, v := range m.labels {
			c, ok := seen[v]
			if !ok {
				c = strings.Clone(v)
				seen[c] = c
			}
			labels = append(labels, c)
		}
		m.labels = labels[start:len(labels):len(labels)]
		out[i] = m
	}
	return out
}

// buildInfo is wgperf_build_info, the series dashboards join on to show
// which build each exporter runs, with the labels of every Prometheus
// exporter's build_info.
func buildInfo(version string) metric {
	i := buildinfo.Read(version)
	return constMetric(descBuildInfo, gauge, 1, i.Version, i.Revision, i.Branch, i.BuildDate, i.GoVersion, i.GOOS, i.GOARCH, i.Tags)
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
