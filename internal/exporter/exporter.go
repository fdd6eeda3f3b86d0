// Package exporter serves one host's WireGuard peers, the kernel counters that
// explain a slow tunnel, and the findings of wgperf's passive checks as
// Prometheus metrics, so a problem like a multi-WAN router's endpoint route
// stuck on the backup uplink raises an alert the moment it appears instead of
// two months later.
//
// Collection and checks run in the background every interval, and the metrics
// of each collection are gathered once, when it finishes; a scrape only encodes
// them, so it stays cheap however often Prometheus asks and however slow the
// host is to answer.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	goruntime "runtime"
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

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
	// Names gives peers a friendly name label (see ReadPeerNames).
	Names PeerNames
	// Version is reported by wgperf_build_info.
	Version string
}

// Exporter watches one host. It is a prometheus.Collector, to register in any
// registry, and a prometheus.Gatherer whose host metrics were gathered when
// the collection finished, which Handler serves.
type Exporter struct {
	target target.Target
	opts   Options
	latest atomic.Pointer[round]
	self   *prometheus.Registry // the exporter's own health metrics
	roam   *roamLimiter

	collections atomic.Uint64
	failures    atomic.Uint64
}

// round is the outcome of one collection: the metrics it produced, or why not.
type round struct {
	metrics  []prometheus.Metric // host metrics; nil when the collection failed
	families []*dto.MetricFamily // metrics, gathered; read-only once stored
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
	e := &Exporter{target: t, opts: opts, self: prometheus.NewRegistry(), roam: newRoamLimiter()}
	e.self.MustRegister(selfCollector{e})
	return e
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
	r := collectRound(ctx, e.target, min(e.opts.Interval, 30*time.Second), e.opts.Now, e.opts.Checks, e.labels())
	e.publish(r)
	return r.err
}

func (e *Exporter) labels() peerLabels { return peerLabels{names: e.opts.Names, roam: e.roam} }

// collectRound collects t once within timeout and runs the passive checks.
func collectRound(ctx context.Context, t target.Target, timeout time.Duration, now func() time.Time, opts check.Options, pl peerLabels) *round {
	start := now()
	snap, err := collect.Collect(ctx, t, collect.Options{Timeout: timeout, Now: now})
	took := now().Sub(start)
	if err != nil {
		return &round{took: took, err: err}
	}
	return newRound(snap, check.Run([]*facts.Snapshot{snap}, opts), took, pl)
}

// newRound turns a successful collection into the metrics scrapes serve.
func newRound(snap *facts.Snapshot, res check.Result, took time.Duration, pl peerLabels) *round {
	r := &round{took: took, metrics: hostMetrics(snap, res, pl)}
	var err error
	if r.families, err = gather(r.metrics); err != nil {
		// hostMetrics keeps series unique; this is a bug worth seeing in the metrics.
		return &round{took: took, err: fmt.Errorf("gather metrics: %w", err)}
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
	e.publish(newRound(snap, res, took, e.labels()))
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

// gather validates and sorts metrics into families, as a registry would at scrape time.
func gather(ms []prometheus.Metric) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(metricSlice(ms)); err != nil {
		return nil, err
	}
	return reg.Gather()
}

// metricSlice is a fixed set of metrics as a collector.
type metricSlice []prometheus.Metric

func (m metricSlice) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(m, ch) }

func (m metricSlice) Collect(ch chan<- prometheus.Metric) {
	for _, x := range m {
		ch <- x
	}
}

// Describe sends every descriptor the exporter can produce.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the exporter's own metrics and those of the latest collection.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	selfCollector{e}.Collect(ch)
	if r := e.latest.Load(); r != nil {
		for _, m := range r.metrics {
			ch <- m
		}
	}
}

// Gather returns the exporter's own metrics, gathered now, with the host
// metrics gathered when the latest collection finished.
func (e *Exporter) Gather() ([]*dto.MetricFamily, error) {
	own, err := e.self.Gather()
	if r := e.latest.Load(); r != nil {
		own = append(own, r.families...)
	}
	sort.Slice(own, func(i, j int) bool { return own[i].GetName() < own[j].GetName() })
	return own, err
}

// selfCollector is the exporter's own health: did the latest collection work,
// how long did it take, when did one last succeed.
type selfCollector struct{ e *Exporter }

func (s selfCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range selfDescs {
		ch <- d
	}
}

func (s selfCollector) Collect(ch chan<- prometheus.Metric) {
	r := s.e.latest.Load()
	success := 0.0
	if r != nil && r.err == nil {
		success = 1
	}
	ch <- prometheus.MustNewConstMetric(descCollectSuccess, prometheus.GaugeValue, success)
	ch <- prometheus.MustNewConstMetric(descCollections, prometheus.CounterValue, float64(s.e.collections.Load()))
	ch <- prometheus.MustNewConstMetric(descCollectFailures, prometheus.CounterValue, float64(s.e.failures.Load()))
	if r == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descCollectDuration, prometheus.GaugeValue, r.took.Seconds())
	if !r.lastOK.IsZero() {
		ch <- prometheus.MustNewConstMetric(descCollectTimestamp, prometheus.GaugeValue, unixSeconds(r.lastOK))
	}
}

// Handler serves Gather with the exporter process's own metrics (memory, CPU,
// goroutines, build info, and those of extra collectors such as a Prober), as
// Prometheus expects at /metrics.
func (e *Exporter) Handler(extra ...prometheus.Collector) http.Handler {
	runtime := prometheus.NewRegistry()
	runtime.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector(),
		buildInfo(e.opts.Version))
	runtime.MustRegister(extra...)
	// The two sets of names (go_/process_ and wgperf_) never meet, so the
	// families can be joined without a registry re-checking every sample.
	all := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		own, err := runtime.Gather()
		mine, err2 := e.Gather()
		own = append(own, mine...)
		sort.Slice(own, func(i, j int) bool { return own[i].GetName() < own[j].GetName() })
		return own, errors.Join(err, err2)
	})
	return promhttp.HandlerFor(all, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// buildInfo is wgperf_build_info, the series dashboards join on to show
// which version each exporter runs.
func buildInfo(version string) prometheus.Collector {
	if version == "" {
		version = "unknown"
	}
	return metricSlice{prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, version, goruntime.Version())}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
