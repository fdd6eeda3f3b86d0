//go:build !router

package exporter

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// serveOnce answers one request through the full build's handler.
func serveOnce(t testing.TB, s *Site, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w.Result()
}

// wgperfLines are the lines of a text exposition about wgperf_ families.
func wgperfLines(text string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "wgperf_") || strings.HasPrefix(line, "# HELP wgperf_") || strings.HasPrefix(line, "# TYPE wgperf_") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// The router build writes /metrics with the small writer (Site.answer), the
// full build through client_golang's registry (ServeHTTP): for the same
// collection both carry the same wgperf_ series byte for byte, and every
// family the router build writes (its process_ and go_ ones too) is in the
// full build's, of the same type. Checked on a collection, on one with
// label values to escape, and after a failed one.
func TestBothBuildsExposeTheSameSeries(t *testing.T) {
	odd := readFixture(t, "multiwan-a.json")
	odd.WireGuard[0].Peers[0].Endpoint = "[2001:db8::1]:51820"
	names := PeerNames{odd.WireGuard[0].Peers[0].PublicKey: "back\\slash \"quoted\"\nnew line, \xff not UTF-8"}
	for _, tc := range []struct {
		name   string
		fill   func(e *Exporter)
		series string // a host series both must carry; "" for none
	}{
		{"collection", func(e *Exporter) {
			snap := readFixture(t, "multiwan-b.json")
			e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), time.Second, nil)
		}, "wgperf_finding{"},
		{"escaped labels", func(e *Exporter) {
			e.store(odd, check.Run([]*facts.Snapshot{odd}, check.Options{}), 1500*time.Millisecond, nil)
		}, `name="back\\slash \"quoted\"\nnew line, � not UTF-8"`},
		{"failed collection", func(e *Exporter) {
			e.store(odd, check.Result{}, time.Second, nil)
			e.store(nil, check.Result{}, 2*time.Second, errors.New("ssh: connect to host golem port 22: No route to host"))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(target.Local(), Options{Names: names, Version: "v1.2.3"})
			tc.fill(e)
			site := &Site{Exporter: e, Prober: NewProber(ProbeOptions{})}
			var small bytes.Buffer
			if err := site.answer(t.Context(), request{method: "GET", path: "/metrics"}).writeTo(&small); err != nil {
				t.Fatal(err)
			}
			resp := serveOnce(t, site, "/metrics", map[string]string{"Accept": "text/plain;version=0.0.4"})
			lib, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4;") {
				t.Fatalf("the library's /metrics: %s %q:\n%s", resp.Status, resp.Header.Get("Content-Type"), lib)
			}
			ours, theirs := wgperfLines(small.String()), wgperfLines(string(lib))
			if diff := cmp.Diff(ours, theirs); diff != "" {
				t.Errorf("the two builds' wgperf_ series differ (-router +full):\n%s", diff)
			}
			if !strings.Contains(ours, "wgperf_collect_success ") || tc.series != "" && !strings.Contains(ours, tc.series) {
				t.Errorf("the scrape lacks wgperf_collect_success or %s:\n%s", tc.series, ours)
			}
			if tc.series == "" && strings.Contains(ours, "wgperf_wireguard_") {
				t.Errorf("host series served after a failed collection:\n%s", ours)
			}
			smallFams, libFams := parseText(t, small.String()), parseText(t, string(lib))
			for n, f := range smallFams {
				if libFams[n] == nil || libFams[n].GetType() != f.GetType() {
					t.Errorf("the router build's %s (%s) is not in the full build's /metrics as one", n, f.GetType())
				}
			}
		})
	}
}

// seriesNames are the wgperf_ series names of an exposition, sorted, once each.
func seriesNames(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "wgperf_") {
			out = append(out, line[:strings.IndexAny(line, "{ ")])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func parseText(t testing.TB, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the Prometheus parser refuses the exposition: %v\n%s", err, text)
	}
	return fams
}

// /metrics negotiates as client_golang does: OpenMetrics for Prometheus'
// default Accept header, gzip when accepted; anything not GET or HEAD is
// refused as on the other pages.
func TestFullBuildMetricsNegotiate(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	e := New(target.Local(), Options{})
	e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), time.Second, nil)
	site := &Site{Exporter: e}
	resp := serveOnce(t, site, "/metrics", map[string]string{
		"Accept":          "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
		"Accept-Encoding": "gzip",
	})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Prometheus' scrape: %s %q encoded %q, want gzipped OpenMetrics", resp.Status, ct, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(body), "# EOF\n") || !strings.Contains(string(body), "\nwgperf_collect_success 1.0\n") ||
		!strings.Contains(string(body), "# TYPE wgperf_collections counter\n") {
		t.Errorf("not OpenMetrics with the collection:\n%.3000s", body)
	}
	// The same series names as in the text format: OpenMetrics would add
	// _total to a counter without it, renaming its series.
	text, _ := io.ReadAll(serveOnce(t, site, "/metrics", nil).Body)
	if om, plain := seriesNames(string(body)), seriesNames(string(text)); !slices.Equal(om, plain) || len(om) < 20 {
		t.Errorf("OpenMetrics names the series %v, the text format %v", om, plain)
	}
	req := httptest.NewRequest(http.MethodPost, "/metrics", nil)
	w := httptest.NewRecorder()
	site.ServeHTTP(w, req)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", w.Code)
	}
}

// The landing page is exporter-toolkit's, with the /probe form when there is
// a Prober; the texts it shows are escaped (its template is not HTML-aware).
func TestFullBuildLandingPage(t *testing.T) {
	site := &Site{Exporter: newLocal(), Prober: NewProber(ProbeOptions{}), Landing: &LandingPage{
		Description: "Watching ssh:root@<script>x</script> every 30s.", Version: "v1.2.3",
		Links: []LandingLink{{Address: "/metrics", Text: "Metrics", Description: "the host's"}},
	}}
	resp := serveOnce(t, site, "/", nil)
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	for _, want := range []string{`<h1>wgperf exporter</h1>`, `Watching ssh:root@&lt;script&gt;x&lt;/script&gt; every 30s.`,
		`Version: v1.2.3`, `<a href="/metrics">Metrics</a>: the host&#39;s`, `<form action="/probe">`, `name="target"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the landing page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "debug/pprof") {
		t.Errorf("the landing page carries a script or pprof links it has not:\n%s", page)
	}
	if small := site.Landing.html(true); !strings.Contains(small, "ssh:root@&lt;script&gt;") || strings.Contains(small, "<script>") {
		t.Errorf("the router build's landing page does not escape its texts:\n%s", small)
	}
	if resp := serveOnce(t, site, "/nothing", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nothing: %s", resp.Status)
	}
}

// The watched host's largest collection the budget admits (a hub of 3,500
// peers), scraped ten at once through the library, gzipped as Prometheus
// asks, keeps the heap within what the router build's shared text allowed
// (TestHubTooBigFailsItsScrapeNotTheProcess): the library's model of the
// collection is made once and shared (hostGatherer), and at most gzipSlots
// answers are compressed at once.
func TestFullBuildMetricsOfABigHubStayInTheUnit(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	peers, err := parse.ParseWGDump(strings.NewReader(hubDump(3_500)))
	if err != nil {
		t.Fatal(err)
	}
	snap.WireGuard[0].Peers = peers[0].Peers
	e := New(target.Local(), Options{})
	e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), time.Second, nil)
	if e.latest.Load().err != nil {
		t.Fatal(e.latest.Load().err)
	}
	snap, peers = nil, nil
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(unitMemoryLimit(t)))
	srv := httptest.NewServer(&Site{Exporter: e})
	defer srv.Close()
	first := heapPeak()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Gathering the collection into the library's model: 13 to 15 MiB seen.
	if g := first(); g > 24<<20 {
		t.Errorf("the heap grew by %d MiB for the first scrape, which gathers the collection, want at most 24 MiB", g>>20)
	} else {
		t.Logf("the first scrape, which gathers the collection: the heap grew by %d MiB", g>>20)
	}
	grown := heapPeak()
	var wg sync.WaitGroup
	sizes := make([]int, 10)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for i := range sizes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var body io.Reader = resp.Body
			if resp.Header.Get("Content-Encoding") == "gzip" { // plain once gzipSlots are taken
				if body, err = gzip.NewReader(resp.Body); err != nil {
					t.Error(err)
					return
				}
			}
			n, err := io.Copy(io.Discard, body) // not held: the test's copies would be most of the heap
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("a concurrent scrape: %v, HTTP %d", err, resp.StatusCode)
			}
			sizes[i] = int(n)
		}()
	}
	wg.Wait()
	g := grown()
	if slices.Min(sizes) < 3<<20 {
		t.Fatalf("answers of %v bytes, want the hub's series (over 3 MiB)", sizes)
	}
	const most = 16 << 20 // 10 MiB seen
	if g > most {
		t.Errorf("the heap grew by %d MiB for ten scrapes of a %d KiB answer, want at most %d MiB", g>>20, sizes[0]>>10, most>>20)
	} else {
		t.Logf("ten scrapes of a %d KiB answer: the heap grew by %d MiB", sizes[0]>>10, g>>20)
	}
}
