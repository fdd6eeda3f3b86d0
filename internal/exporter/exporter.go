// Package exporter serves one host's WireGuard peers, the kernel counters that
// explain a slow tunnel, and the findings of wgperf's passive checks as
// Prometheus metrics, so a problem like seed 000's stale endpoint route raises
// an alert the moment it appears instead of two months later.
//
// Collection and checks run in the background every interval; a scrape only
// copies the metrics built from the latest snapshot, so it stays cheap however
// often Prometheus asks and however slow the host is to answer.
package exporter

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
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
}

// Exporter is a prometheus.Collector over the latest collection of one host.
type Exporter struct {
	target target.Target
	opts   Options
	latest atomic.Pointer[round]

	collections atomic.Uint64
	failures    atomic.Uint64
}

// round is the outcome of one collection: the metrics it produced, or why not.
type round struct {
	metrics []prometheus.Metric // host metrics; nil when the collection failed
	took    time.Duration
	err     error
	lastOK  time.Time // the latest successful collection, kept across failures
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
	return &Exporter{target: t, opts: opts}
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
	start := e.opts.Now()
	// A collection must finish before the next one is due.
	snap, err := collect.Collect(ctx, e.target, collect.Options{Timeout: min(e.opts.Interval, 30*time.Second), Now: e.opts.Now})
	took := e.opts.Now().Sub(start)
	if err != nil {
		e.store(nil, check.Result{}, took, err)
		return err
	}
	e.store(snap, check.Run([]*facts.Snapshot{snap}, e.opts.Checks), took, nil)
	return nil
}

// store publishes a collection's outcome to scrapes.
func (e *Exporter) store(snap *facts.Snapshot, res check.Result, took time.Duration, err error) {
	e.collections.Add(1)
	r := &round{took: took, err: err}
	if prev := e.latest.Load(); prev != nil {
		r.lastOK = prev.lastOK
	}
	if err != nil {
		e.failures.Add(1)
	} else {
		r.metrics = hostMetrics(snap, res)
		r.lastOK = snap.CollectedAt
	}
	e.latest.Store(r)
}

// Describe sends every descriptor the exporter can produce.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the metrics of the latest collection and the exporter's own.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	r := e.latest.Load()
	success := 0.0
	if r != nil && r.err == nil {
		success = 1
	}
	ch <- prometheus.MustNewConstMetric(descCollectSuccess, prometheus.GaugeValue, success)
	ch <- prometheus.MustNewConstMetric(descCollections, prometheus.CounterValue, float64(e.collections.Load()))
	ch <- prometheus.MustNewConstMetric(descCollectFailures, prometheus.CounterValue, float64(e.failures.Load()))
	if r == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descCollectDuration, prometheus.GaugeValue, r.took.Seconds())
	if !r.lastOK.IsZero() {
		ch <- prometheus.MustNewConstMetric(descCollectTimestamp, prometheus.GaugeValue, unixSeconds(r.lastOK))
	}
	for _, m := range r.metrics {
		ch <- m
	}
}

// Handler serves the exporter's metrics with the exporter process's own
// (memory, CPU, goroutines), as Prometheus expects at /metrics.
func (e *Exporter) Handler() (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		e,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), nil
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
