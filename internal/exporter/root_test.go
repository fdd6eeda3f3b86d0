package exporter

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// startExporter runs the real "wgperf exporter" binary on a free loopback
// port, watching host, and stops it when the test ends.
func startExporter(t testing.TB, host string, interval time.Duration) (url string, p *target.Process) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err = target.Local().Start(context.Background(), labtest.Binary(t), "exporter",
		"--listen", addr, "--host", host, "--interval", interval.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	url = "http://" + addr + "/metrics"
	// The first collection runs before the port opens.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := fetch(url); err == nil {
			return url, p
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("exporter did not come up on %s: %s", addr, p.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), nil
}

// TestStaleEndpointAlertsWithinOneInterval is seed 000 on a live router: the
// endpoint route gets pinned to the backup uplink, and the exporter must say so
// by the end of the next collection, not two months later.
func TestStaleEndpointAlertsWithinOneInterval(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "wgx1", Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 100}})
	const interval = 3 * time.Second
	url, p := startExporter(t, "netns:"+l.Netns("a"), interval)

	const stale = `wgperf_finding{id="route.stale-endpoint"`
	healthy, err := fetch(url)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(healthy, stale) {
		t.Fatalf("healthy lab already reports a stale endpoint:\n%s", healthy)
	}
	took := sampleValue(t, healthy, "wgperf_collect_duration_seconds")

	if _, err := l.Target("a").Run(context.Background(), staleRouteCmd[0], staleRouteCmd[1:]...); err != nil {
		t.Fatalf("break endpoint route: %v", err)
	}
	broken := time.Now()
	// The next collection starts at most one interval from now and takes about
	// as long as the last one; allow that much and a little scheduling slack.
	deadline := broken.Add(interval + 2*time.Duration(took*float64(time.Second)) + time.Second)
	for {
		got, err := fetch(url)
		if err != nil {
			t.Fatalf("%v (exporter stderr: %s)", err, p.Stderr())
		}
		if strings.Contains(got, stale) {
			t.Logf("stale endpoint reported %.1fs after the break (interval %s, collection %.2fs)",
				time.Since(broken).Seconds(), interval, took)
			want := `wgperf_finding{id="route.stale-endpoint",interface="` + l.WGInterface("a") + `",peer="` + l.Node("b").PublicKey + `",severity="critical"} 1`
			if !strings.Contains(got, want) {
				t.Errorf("finding series has unexpected labels, want %s in:\n%s", want, got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s of the break:\n%s", stale, time.Until(deadline)+time.Since(broken), got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkScrapeLab1000Peers scrapes the real exporter binary watching a lab
// node whose userspace WireGuard device has 1,000 extra peers, with the
// default --collector.peers.max. Targets: a scrape under 50 ms and the
// exporter under 30 MB resident.
func BenchmarkScrapeLab1000Peers(b *testing.B) {
	l := labtest.Up(b, lab.Config{Name: "wgx2", Topology: lab.SiteToSite})
	addPeers(b, l.Target("a"), l.WGInterface("a"), 1000)
	url, p := startExporter(b, "netns:"+l.Netns("a"), time.Hour)
	first, err := fetch(url)
	if err != nil {
		b.Fatal(err)
	}
	// 1,001 peers, of which --collector.peers.max (its default) have series.
	if n := strings.Count(first, "wgperf_wireguard_peer_info{"); n != DefaultMaxPeers || !strings.Contains(first, fmt.Sprintf("wgperf_wireguard_peers_without_series{interface=%q} %d", l.WGInterface("a"), 1001-DefaultMaxPeers)) {
		b.Fatalf("exporter gives %d peers series, want %d of 1001", n, DefaultMaxPeers)
	}
	var size int
	for b.Loop() {
		got, err := fetch(url)
		if err != nil {
			b.Fatal(err)
		}
		size = len(got)
	}
	b.ReportMetric(float64(size)/1024, "text-KiB/scrape")
	b.ReportMetric(sampleValue(b, first, "wgperf_collect_duration_seconds")*1000, "collect-ms")
	rss, hwm := procMemoryMB(b, p.Pid())
	b.ReportMetric(rss, "exporter-RSS-MB")
	b.ReportMetric(hwm, "exporter-peak-RSS-MB")
}

// procMemoryMB reads a process's resident and peak resident memory.
func procMemoryMB(t testing.TB, pid int) (rss, peak float64) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}
