package exporter

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
)

// withPeers returns the recorded multi-wan snapshot with n more peers on its
// WireGuard interface, as a busy hub would have.
func withPeers(t testing.TB, n int) *facts.Snapshot {
	s := readFixture(t, "multiwan-a.json")
	w := &s.WireGuard[0]
	for i := range n {
		w.Peers = append(w.Peers, facts.WGPeer{
			PublicKey:       fmt.Sprintf("%043d=", i),
			Endpoint:        fmt.Sprintf("198.18.%d.%d:51820", i/250, i%250+1),
			AllowedIPs:      []string{fmt.Sprintf("10.99.%d.%d/32", i/250, i%250+1)},
			LatestHandshake: s.CollectedAt.Add(-time.Duration(i) * time.Second),
			RxBytes:         uint64(i) * 1e6,
			TxBytes:         uint64(i) * 2e6,
		})
	}
	return s
}

// BenchmarkScrape1000Peers is one Prometheus scrape of /metrics for a host
// with 1,001 peers, over loopback HTTP as this build serves it (net/http
// gzips, as Prometheus asks; the router build's small server does not).
func BenchmarkScrape1000Peers(b *testing.B) {
	s := withPeers(b, 1000)
	e := newLocal()
	e.store(s, check.Run([]*facts.Snapshot{s}, check.Options{}), time.Second, nil)
	url := testServer(b, &Site{Exporter: e}) + "/metrics"
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip") // set by hand, so the client does not unpack it
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	var size int
	for b.Loop() {
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("scrape: %v %d %s", err, resp.StatusCode, body)
		}
		size = len(body)
	}
	b.ReportMetric(float64(size)/1024, "wire-KiB/scrape")
}

// BenchmarkStore1000Peers is the per-collection cost of turning a snapshot
// into metrics (runs in the background, once per interval).
func BenchmarkStore1000Peers(b *testing.B) {
	s := withPeers(b, 1000)
	res := check.Run([]*facts.Snapshot{s}, check.Options{})
	e := newLocal()
	for b.Loop() {
		e.store(s, res, time.Second, nil)
	}
}
