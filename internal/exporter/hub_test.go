package exporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// hubExporter is an exporter that collected the lab hub with 998 more
// offline peers (1,000 in all) through a real shell (testutil.HubTools), as
// it collects a host.
func hubExporter(t testing.TB, o Options) *Exporter {
	t.Helper()
	o.Now = func() time.Time { return testutil.HubRecorded }
	e := New(targettest.InShell(t, "ssh:root@hub", testutil.HubTools(t, 998)), o)
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// scrapeSeries fetches url as Prometheus does without compression: the body and
// its series (sample lines).
func scrapeSeries(t testing.TB, client *http.Client, url string) (body string, series int) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %v %d %s", err, resp.StatusCode, b)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			series++
		}
	}
	return string(b), series
}

// BenchmarkScrapeHub1000Peers is one scrape of /metrics of an exporter
// watching a hub with 1,000 peers, 998 of them offline (issue 49: 7,031
// series, 873 KB before stale peers were one finding and per-peer series
// had a cap), with the binary's default --collector.peers.max. It reports
// the series and the text's size.
func BenchmarkScrapeHub1000Peers(b *testing.B) {
	url := testServer(b, &Site{Exporter: hubExporter(b, Options{MaxPeers: DefaultMaxPeers})}) + "/metrics"
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	var body string
	var series int
	for b.Loop() {
		body, series = scrapeSeries(b, client, url)
	}
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(float64(len(body))/1024, "text-KiB")
	b.ReportMetric(float64(strings.Count(body, "\nwgperf_finding{")), "finding-series")
}

// TestHubSeriesAreBounded scrapes the exporter of a hub with 1,000 peers:
// with --collector.peers.max 200, 200 peers have series of their own (the
// two live spokes and a named one that comes late in the dump among them),
// the other 800 are counted, and the 998 offline ones
// are two finding series; with 0, every peer has its series.
func TestHubSeriesAreBounded(t *testing.T) {
	named := testutil.HubPeer(700).Key
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, tc := range []struct {
		max, peers int
	}{{DefaultMaxPeers, DefaultMaxPeers}, {0, 1000}} {
		e := hubExporter(t, Options{MaxPeers: tc.max, Names: PeerNames{named: "warrior-700"}})
		body, series := scrapeSeries(t, client, testServer(t, &Site{Exporter: e})+"/metrics")
		if n := strings.Count(body, "\nwgperf_wireguard_peer_info{"); n != tc.peers {
			t.Errorf("max %d: %d peers with series, want %d", tc.max, n, tc.peers)
		}
		if n := strings.Count(body, "\nwgperf_wireguard_peer_handshake_age_seconds{"); n > tc.peers {
			t.Errorf("max %d: %d handshake ages, want at most %d", tc.max, n, tc.peers)
		}
		for _, want := range []string{`name="warrior-700"`, `peer="UedlICbsyw0ir54jIX4m7zBzpQUeR2YgDPMi4fT1eHE="`, `peer="OrbnkZQTcIKMN+4UfK1UzKE0YR+xK58VTS6DGxq4sBw="`,
			fmt.Sprintf(`wgperf_wireguard_peers_without_series{interface="wg-mpeer-r"} %d`, 1000-tc.peers)} {
			if !strings.Contains(body, want) {
				t.Errorf("max %d: the scrape lacks %s", tc.max, want)
			}
		}
		if n := strings.Count(body, "\nwgperf_finding{id=\"wg.handshake-stale\""); n != 2 {
			t.Errorf("max %d: %d wg.handshake-stale series, want 2 (down, idle)", tc.max, n)
		}
		t.Logf("max %d: %d series, %d KiB", tc.max, series, len(body)/1024)
	}
}

// Past the cap, named peers come first, then live ones, then the rest, and
// the kept ones stay in the dump's order.
func TestExportedPeersPreferNamedThenLive(t *testing.T) {
	at := testutil.HubRecorded
	peers := []facts.WGPeer{
		{PublicKey: "off1", LatestHandshake: at.Add(-time.Hour)},
		{PublicKey: "never"},
		{PublicKey: "named", LatestHandshake: at.Add(-time.Hour)},
		{PublicKey: "live", LatestHandshake: at.Add(-time.Minute)},
		{PublicKey: "off2", LatestHandshake: at.Add(-time.Hour)},
	}
	names := PeerNames{"named": "laptop"}
	for _, tc := range []struct {
		max  int
		want string
	}{{0, "off1 never named live off2"}, {5, "off1 never named live off2"}, {1, "named"}, {2, "named live"}, {3, "off1 named live"}, {4, "off1 never named live"}} {
		var got []string
		for _, p := range exportedPeers(peers, peerLabels{names: names, max: tc.max}, at) {
			got = append(got, p.PublicKey)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("max %d: %q, want %q", tc.max, got, tc.want)
		}
	}
}
