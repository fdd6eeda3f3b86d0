//go:build !router

package exporter

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	promcollectors "github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/exporter-toolkit/web"
)

// The full build serves /metrics through client_golang, which it links for
// exporter-toolkit anyway: the library's process and Go collectors and the
// exporter's own samples of the moment in one registry, gathered at each
// scrape, and the watched host's samples in another, gathered once per
// collection and shared by every scrape until the next (hostGatherer), as
// the router build shares its rendered text. promhttp serves the two
// (mergedGatherer), negotiating the format (the text format, OpenMetrics)
// and the compression. The landing page is exporter-toolkit's. The router
// build keeps the small writer (expo.go): the library with its protobuf
// model was a third of that binary.

// keepHostSamples: the watched host's collections keep their samples for
// hostGatherer rather than rendered text.
const keepHostSamples = true

// libSite is the full build's handlers of a Site, made at its first request.
type libSite struct {
	once    sync.Once
	metrics http.Handler // compressing when the client accepts it
	plain   http.Handler // never compressing: when gzipSlots are taken
	landing http.Handler // nil: the Site has no landing page
	err     error        // the landing page's template failed
}

// handlers are s's /metrics and / through the libraries.
func (s *Site) handlers() *libSite {
	l := &s.lib
	l.once.Do(func() {
		own := prometheus.NewRegistry()
		own.MustRegister(
			promcollectors.NewProcessCollector(promcollectors.ProcessCollectorOpts{}),
			promcollectors.NewGoCollector(),
			ownCollector{s},
		)
		host := &hostGatherer{e: s.Exporter, reg: prometheus.NewRegistry()}
		host.reg.MustRegister(hostCollector{host})
		gatherers := mergedGatherer{own, host}
		opts := promhttp.HandlerOpts{
			ErrorHandling:     promhttp.HTTPErrorOnError,
			EnableOpenMetrics: true,
			CoalesceGather:    true, // scrapes at once share one merge
		}
		l.metrics = promhttp.HandlerFor(gatherers, opts)
		opts.DisableCompression = true
		l.plain = promhttp.HandlerFor(gatherers, opts)
		if s.Landing != nil {
			l.landing, l.err = landingHandler(s.Landing, s.Prober != nil)
		}
	})
	return l
}

// landingHTML is the router build's landing page, which the small server
// serves in this build's tests.
func (s *Site) landingHTML() []byte { return []byte(s.Landing.html(s.Prober != nil)) }

// serveMetrics answers /metrics through promhttp, compressed only while one
// of gzipSlots is free (each compressing answer holds about 800 KiB).
func (s *Site) serveMetrics(w http.ResponseWriter, r *http.Request) {
	l := s.handlers()
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		l.plain.ServeHTTP(w, r)
		return
	}
	select {
	case gzipSlots <- struct{}{}:
		defer func() { <-gzipSlots }()
		l.metrics.ServeHTTP(w, r)
	default:
		w.Header().Add("Vary", "Accept-Encoding")
		l.plain.ServeHTTP(w, r)
	}
}

// mergedGatherer is the families of own, gathered now, and of host, shared
// with other scrapes. Their names are apart (the exporter's own families and
// the collectors' are declared apart, and the library's are process_ and
// go_), so the registries' checks need not run again on every host sample
// at every scrape, as prometheus.Gatherers would: a name in both is an error.
type mergedGatherer struct {
	own  prometheus.Gatherer
	host *hostGatherer
}

func (m mergedGatherer) Gather() ([]*dto.MetricFamily, error) {
	own, err := m.own.Gather()
	host, herr := m.host.Gather()
	out := slices.SortedFunc(slices.Values(slices.Concat(own, host)), func(a, b *dto.MetricFamily) int {
		return strings.Compare(a.GetName(), b.GetName())
	})
	for i := 1; i < len(out); i++ {
		if out[i].GetName() == out[i-1].GetName() {
			return nil, fmt.Errorf("metric family %s gathered by the exporter and from the host", out[i].GetName())
		}
	}
	return out, errors.Join(err, herr)
}

// hostGatherer gathers the watched host's latest collection through reg
// (hostCollector) once, at the first scrape after it, and gives every scrape
// until the next collection those families: the library's model of the
// largest host the budget admits takes about 3 times its text, and a copy
// per scrape, held by clients slow to read, would be that many times more.
type hostGatherer struct {
	e   *Exporter
	reg *prometheus.Registry

	mu   sync.Mutex
	r    *round // the collection fams are of; read by hostCollector during reg.Gather
	fams []*dto.MetricFamily
}

func (g *hostGatherer) Gather() ([]*dto.MetricFamily, error) {
	r := g.e.latest.Load()
	g.mu.Lock()
	defer g.mu.Unlock()
	if r != g.r {
		g.r, g.fams = r, nil // the previous collection's go first
		fams, err := g.reg.Gather()
		if err != nil {
			g.r = nil
			return nil, err
		}
		g.fams = fams
	}
	return g.fams, nil
}

// hostCollector emits the samples of the collection its hostGatherer gathers.
type hostCollector struct{ g *hostGatherer }

// Describe declares every family a collector may emit, so the registry
// refuses a sample of another.
func (c hostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, col := range collectors {
		for _, d := range col.descs {
			ch <- libDesc(d)
		}
	}
}

func (c hostCollector) Collect(ch chan<- prometheus.Metric) {
	if c.g.r == nil {
		return
	}
	for _, m := range c.g.r.samples {
		ch <- constLibMetric(m)
	}
}

// ownCollector emits the exporter's own samples of the moment (Site.ownMetrics).
type ownCollector struct{ s *Site }

func (c ownCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range ownDescs {
		ch <- libDesc(d)
	}
}

func (c ownCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.s.ownMetrics() {
		ch <- constLibMetric(m)
	}
}

// landingHandler is exporter-toolkit's landing page for l, with a form for
// /probe when there is a Prober. Its template is not HTML-aware: every text
// is escaped here.
func landingHandler(l *LandingPage, withProbe bool) (http.Handler, error) {
	e := html.EscapeString
	c := web.LandingConfig{
		Name:        "wgperf exporter",
		Description: e(l.Description),
		Version:     e(l.Version),
		Profiling:   "false", // no pprof here
	}
	for _, k := range l.Links {
		c.Links = append(c.Links, web.LandingLinks{Address: e(k.Address), Text: e(k.Text), Description: e(k.Description)})
	}
	if withProbe {
		c.Form = web.LandingForm{Action: "/probe", Inputs: []web.LandingFormInput{
			{Label: "Target", Type: "text", Name: "target", Placeholder: e(probeTargetHint)},
		}}
	}
	return web.NewLandingPage(c)
}

// constLibMetric is m as the library's const metric. Label values that are
// not UTF-8 get U+FFFD, as the small writer writes them (expo.go's escape).
func constLibMetric(m metric) prometheus.Metric {
	labels := m.labels
	for i, v := range m.labels {
		if utf8.ValidString(v) {
			continue
		}
		if &labels[0] == &m.labels[0] { // m's own values are shared with other scrapes
			labels = slices.Clone(m.labels)
		}
		labels[i] = strings.ToValidUTF8(v, "\uFFFD")
	}
	t := prometheus.GaugeValue
	if m.typ == counter {
		t = prometheus.CounterValue
	}
	d := libDesc(m.desc)
	pm, err := prometheus.NewConstMetric(d, t, m.value, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return pm
}

// libDescs are the library's Descs of every wgperf_ family, made once.
var libDescs = sync.OnceValue(func() map[*Desc]*prometheus.Desc {
	m := map[*Desc]*prometheus.Desc{}
	for _, d := range allDescs() {
		m[d] = prometheus.NewDesc(d.name, d.help, d.labels, nil)
	}
	return m
})

// libDesc is d's Desc in the library; one allDescs does not list is made
// anew, and the registry refuses its samples as undeclared.
func libDesc(d *Desc) *prometheus.Desc {
	if ld, ok := libDescs()[d]; ok {
		return ld
	}
	return prometheus.NewDesc(d.name, d.help, d.labels, nil)
}
