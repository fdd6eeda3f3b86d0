package exporter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wgperf/wgperf/internal/buildinfo"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

func readFixture(t testing.TB, name string) *facts.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "exporter", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := document.ReadSnapshot(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// scrape renders what /metrics serves, minus the process's own metrics.
func scrape(t testing.TB, e *Exporter) string {
	t.Helper()
	var b bytes.Buffer
	if err := e.writeMetrics(&b); err != nil {
		t.Fatalf("write metrics: %v", err)
	}
	return b.String()
}

// The official parser reads back what the exporter writes, and the official
// writer writes the same bytes from it: the text is the format Prometheus
// speaks, down to label order, escaping and float formatting.
func TestExpositionMatchesPrometheusLibrary(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	snap.WireGuard[0].Peers[0].Endpoint = "[2001:db8::1]:51820"
	e := New(target.Local(), Options{Names: PeerNames{snap.WireGuard[0].Peers[0].PublicKey: "back\\slash \"quoted\"\nnew line, \xff not UTF-8"}})
	e.store(snap, check.Run([]*facts.Snapshot{snap}, check.Options{}), 1500*time.Millisecond, nil)
	site := &Site{Exporter: e, Prober: NewProber(ProbeOptions{})}
	rep := site.answer(t.Context(), request{method: "GET", path: "/metrics"})
	var body bytes.Buffer
	if err := rep.writeTo(&body); err != nil {
		t.Fatal(err)
	}
	got := body.String()
	if !strings.Contains(got, `name="back\\slash \"quoted\"\nnew line, � not UTF-8"`) {
		t.Errorf("peer name label not escaped:\n%s", got)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(got))
	if err != nil {
		t.Fatalf("the Prometheus parser refuses the exposition: %v\n%s", err, got)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	slices.Sort(names)
	var want bytes.Buffer
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(&want, fams[n]); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want.String(), got); diff != "" {
		t.Errorf("exposition differs from client_golang's rendering of it (-library +ours):\n%s", diff)
	}
	for _, n := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds",
		"process_open_fds", "process_max_fds", "go_goroutines", "go_info", "wgperf_build_info", "wgperf_probe_requests_total"} {
		if fams[n] == nil {
			t.Errorf("/metrics lacks %s", n)
		}
	}
}

// A repeated series or a name described twice is refused, not served (a
// scrape with either would fail as a whole in Prometheus).
func TestGatherRefusesRepeatsAndConflicts(t *testing.T) {
	a := newDesc("x_total", "Xs.", "l")
	if _, err := gather([]metric{constMetric(a, counter, 1, "v"), constMetric(a, counter, 2, "v")}); err == nil {
		t.Error("a repeated series was gathered")
	}
	b := newDesc("x_total", "Other Xs.", "l")
	if _, err := gather([]metric{constMetric(a, counter, 1, "v"), constMetric(b, counter, 2, "w")}); err == nil {
		t.Error("one name with two helps was gathered")
	}
	if _, err := gather([]metric{constMetric(a, counter, 1, "v"), constMetric(a, gauge, 2, "w")}); err == nil {
		t.Error("one name with two types was gathered")
	}
}

func TestParseSelfStat(t *testing.T) {
	// A command name with spaces and parentheses, as a process may be called.
	stat := "4242 (wg (perf) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 123456 734003200 4096 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0"
	got := map[string]float64{}
	for _, m := range parseSelfStat(stat) {
		got[m.desc.name] = m.value
	}
	if got["process_cpu_seconds_total"] != 3 || got["process_virtual_memory_bytes"] != 734003200 ||
		got["process_resident_memory_bytes"] != 4096*float64(os.Getpagesize()) {
		t.Errorf("parseSelfStat = %v", got)
	}
	if parseSelfStat("garbage") != nil || parseSelfStat("1 (x) S 1") != nil {
		t.Error("parseSelfStat read a short line")
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
			testutil.Golden(t, filepath.Join("testdata", name+".prom"), []byte(got))
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
	snap := &facts.Snapshot{Host: targettest.Spec("local"), CollectedAt: time.Unix(1_800_000_000, 0)}
	f := finding.Finding{ID: "route.stale-endpoint", Severity: finding.Critical, Interface: "wg0", Peer: "k="}
	res := check.Result{
		Findings: []finding.Finding{f, f, {ID: "wg.userspace", Interface: "wg0"}},
		Skipped:  []check.Skip{{Check: "bond.hash-policy", Host: targettest.Spec("local"), Reason: "no bonds"}},
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
	snap := &facts.Snapshot{Host: targettest.Spec("local"), CollectedAt: at, WireGuard: []facts.WGInterface{{
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
	buildinfo.Revision, buildinfo.Branch, buildinfo.BuildDate = "0123abc", "main", "2026-11-23T20:00:00Z"
	t.Cleanup(func() { buildinfo.Revision, buildinfo.Branch, buildinfo.BuildDate = "", "", "" })
	e := New(target.Local(), Options{Version: "v1.2.3"})
	url := testServer(t, &Site{Exporter: e, Prober: NewProber(ProbeOptions{})})
	_, body := get(t, url+"/metrics")
	for _, want := range []string{
		`wgperf_build_info{branch="main",builddate="2026-11-23T20:00:00Z",goarch="` + runtime.GOARCH + `",goos="linux",goversion="` + runtime.Version() +
			`",revision="0123abc",tags="` + buildinfo.Read("").Tags + `",version="v1.2.3"} 1`,
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
