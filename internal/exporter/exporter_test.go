package exporter

import (
	"bytes"
	"errors"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

var update = flag.Bool("update", false, "rewrite the golden .prom files in testdata/exporter")

func readFixture(t testing.TB, name string) *facts.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "exporter", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := collect.ReadSnapshot(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// scrape renders what Handler serves (minus the process's own metrics) in the
// text exposition format.
func scrape(t testing.TB, e *Exporter) string {
	t.Helper()
	mfs, err := e.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return render(t, mfs)
}

func render(t testing.TB, mfs []*dto.MetricFamily) string {
	t.Helper()
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// The Collector (for other registries) and the pre-gathered fast path must
// serve the same series; the pedantic registry also rejects duplicates.
func TestCollectorMatchesGather(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	e := newLocal()
	e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), time.Second, nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scrape(t, e), render(t, mfs)); diff != "" {
		t.Errorf("Collect and Gather differ (-gather +collect):\n%s", diff)
	}
}

// sampleValue returns the value of the sample line that starts with series.
func sampleValue(t testing.TB, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no sample %s in:\n%s", series, text)
	return 0
}

func newLocal() *Exporter { return New(target.Local(), Options{}) }

// TestMetricsGolden renders the metrics of snapshots recorded from a real
// multi-wan lab with seed 000's breakage (see TestRecordFixtures).
func TestMetricsGolden(t *testing.T) {
	for _, name := range []string{"multiwan-a", "multiwan-b"} {
		t.Run(name, func(t *testing.T) {
			snap := readFixture(t, name+".json")
			e := newLocal()
			e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), 1500*time.Millisecond, nil)
			got := scrape(t, e)
			golden := filepath.Join("..", "..", "testdata", "exporter", name+".prom")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("metrics differ from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// The breakage the lab made must be visible as alerts, whatever the golden says.
func TestSeed000FindingsExported(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	e := newLocal()
	e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), time.Second, nil)
	got := scrape(t, e)
	peer := snap.WireGuard[0].Peers[0].PublicKey
	for _, want := range []string{
		`wgperf_finding{id="route.stale-endpoint",interface="wg-wgx0-a",peer="` + peer + `",severity="critical"} 1`,
		`wgperf_finding{id="icmp.ratelimit-drops",`,
		`wgperf_wireguard_peer_info{allowed_ips="10.77.0.2/32",interface="wg-wgx0-a",name="",peer="` + peer + `"} 1`,
		`wgperf_wireguard_peer_endpoint_info{endpoint_ip="203.0.113.2",interface="wg-wgx0-a",peer="` + peer + `"} 1`,
		`wgperf_collect_success 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}

func TestFailedCollectionDropsHostMetrics(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	e := newLocal()
	e.store(snap, check.Result{}, time.Second, nil)
	e.store(nil, check.Result{}, 2*time.Second, errors.New("ssh: connect to host golem port 22: No route to host"))
	got := scrape(t, e)
	for _, want := range []string{
		"wgperf_collect_success 0",
		"wgperf_collections_total 2",
		"wgperf_collect_failures_total 1",
		"wgperf_collect_duration_seconds 2",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("scrape lacks %q:\n%s", want, got)
		}
	}
	// The last good collection stays known, so "no data since" can be alerted on.
	if v := sampleValue(t, got, "wgperf_collect_timestamp_seconds"); v != unixSeconds(snap.CollectedAt) {
		t.Errorf("collect timestamp %v after a failure, want the last success %v", v, unixSeconds(snap.CollectedAt))
	}
	if strings.Contains(got, "wgperf_wireguard_") || strings.Contains(got, "wgperf_finding") {
		t.Errorf("stale host metrics served after a failed collection:\n%s", got)
	}
}

func TestBeforeFirstCollection(t *testing.T) {
	got := scrape(t, newLocal())
	if !strings.Contains(got, "wgperf_collect_success 0\n") || strings.Contains(got, "wgperf_collect_timestamp_seconds") {
		t.Errorf("before any collection want success 0 and no timestamp, got:\n%s", got)
	}
}

// Findings that differ only in evidence are one series; a repeated series
// would make the whole scrape fail.
func TestDuplicateFindingsAreOneSeries(t *testing.T) {
	snap := &facts.Snapshot{Host: "local", CollectedAt: time.Unix(1_800_000_000, 0)}
	f := finding.Finding{ID: "route.stale-endpoint", Severity: finding.Critical, Interface: "wg0", Peer: "k="}
	res := check.Result{
		Findings: []finding.Finding{f, f, {ID: "wg.userspace", Interface: "wg0"}},
		Skipped:  []check.Skip{{Check: "bond.hash-policy", Host: "local", Reason: "no bonds"}},
	}
	e := newLocal()
	e.store(snap, res, time.Second, nil)
	got := scrape(t, e)
	for _, want := range []string{
		`wgperf_finding{id="route.stale-endpoint",interface="wg0",peer="k=",severity="critical"} 1`,
		`wgperf_findings{severity="critical"} 1`,
		`wgperf_findings{severity="warning"} 0`,
		`wgperf_findings{severity="info"} 1`,
		`wgperf_check_skipped{check="bond.hash-policy"} 1`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("scrape lacks %s:\n%s", want, got)
		}
	}
}

// Handshake age is measured at the collection; a peer that never shook hands
// has timestamp 0 and no age (an age would be meaningless, not infinite).
func TestHandshakeAge(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	snap := &facts.Snapshot{Host: "local", CollectedAt: at, WireGuard: []facts.WGInterface{{
		Name: "wg0", Peers: []facts.WGPeer{
			{PublicKey: "old=", LatestHandshake: at.Add(-200 * time.Second)},
			{PublicKey: "never="},
		},
	}}}
	e := newLocal()
	e.store(snap, check.Result{}, time.Second, nil)
	got := scrape(t, e)
	for _, want := range []string{
		`wgperf_wireguard_peer_handshake_age_seconds{interface="wg0",peer="old="} 200`,
		`wgperf_wireguard_peer_latest_handshake_timestamp_seconds{interface="wg0",peer="never="} 0`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("scrape lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `wgperf_wireguard_peer_handshake_age_seconds{interface="wg0",peer="never="}`) {
		t.Error("a peer without handshake has an age")
	}
}

// /metrics carries wgperf_build_info and the /probe counters next to the
// process metrics, whatever the watched host does.
func TestHandlerServesBuildInfoAndProbeCounters(t *testing.T) {
	e := New(target.Local(), Options{Version: "v1.2.3"})
	srv := httptest.NewServer(e.Handler(NewProber(ProbeOptions{})))
	defer srv.Close()
	_, body := get(t, srv.URL)
	for _, want := range []string{
		`wgperf_build_info{goversion="` + runtime.Version() + `",version="v1.2.3"} 1`,
		`wgperf_probe_requests_total{result="refused"} 0`,
		`wgperf_probe_cache_targets 0`,
		`wgperf_collect_success 0`,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
}
