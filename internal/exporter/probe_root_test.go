package exporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestProbeRoutersOverSSH is the central-exporter deployment on the lab: one
// Prober collects node B over ssh through the tunnel (B runs sshd and no
// wgperf), names B's peer from a wg-quick style names file, serves a repeat
// scrape from its cache, reports a router whose ssh is refused as a failed
// collection, and its answer passes promtool's metrics lint.
func TestProbeRoutersOverSSH(t *testing.T) {
	testutil.RequireTools(t, "promtool")
	l := labtest.Up(t, lab.Config{Name: "ct1", Topology: lab.SiteToSite})
	spec := labtest.SSHD(t, l, "b")
	// Nothing listens on A's tunnel address at the ssh port: ssh is refused at once.
	dead := fmt.Sprintf("ssh:root@%s:%d", l.Node("a").TunnelAddr, labtest.SSHPort)

	namesFile := filepath.Join(t.TempDir(), "wg0.conf")
	conf := "[Interface]\nPrivateKey = never-read\n\n[Peer]\n# Name = site A\nPublicKey = " + l.Node("a").PublicKey + "\n"
	if err := os.WriteFile(namesFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	names, err := ReadPeerNames(namesFile)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProber(ProbeOptions{Allow: []string{"ssh:root@*"}, Names: names, Timeout: 20 * time.Second, Logf: t.Logf})
	srv := testServer(t, &Site{Prober: p})

	start := time.Now()
	code, body := get(t, probeURL(srv, spec), "X-Prometheus-Scrape-Timeout-Seconds", "25")
	first := time.Since(start)
	if code != http.StatusOK || sampleValue(t, body, "wgperf_collect_success") != 1 {
		t.Fatalf("probe %s: HTTP %d:\n%s", spec, code, body)
	}
	iface := l.WGInterface("b")
	for _, want := range []string{
		`wgperf_wireguard_interface_info{implementation="userspace",interface="` + iface + `"`,
		`wgperf_wireguard_peer_info{allowed_ips="10.77.0.1/32",interface="` + iface + `",name="site A",peer="` + l.Node("a").PublicKey + `"} 1`,
		`wgperf_udp_rcvbuf_errors_total `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("probe of %s lacks %s:\n%s", spec, want, body)
		}
	}
	if strings.Contains(body, l.WGInterface("a")) {
		t.Errorf("probe of B shows A's interface:\n%s", body)
	}

	start = time.Now()
	_, again := get(t, probeURL(srv, spec))
	cached := time.Since(start)
	if again != body || p.runs.Load() != 1 {
		t.Errorf("repeat scrape within the cache TTL ran %d collections or changed the answer", p.runs.Load())
	}
	t.Logf("probe %s: first scrape %.0f ms (ssh collection), cached scrape %.1f ms, %d bytes",
		spec, first.Seconds()*1000, cached.Seconds()*1000, len(body))

	start = time.Now()
	code, failed := get(t, probeURL(srv, dead))
	if code != http.StatusOK || sampleValue(t, failed, "wgperf_collect_success") != 0 {
		t.Errorf("probe of %s (ssh refused): HTTP %d:\n%s", dead, code, failed)
	}
	t.Logf("probe %s (ssh refused): answered in %.0f ms", dead, time.Since(start).Seconds()*1000)

	if code, _ := get(t, probeURL(srv, "netns:"+l.Netns("b"))); code != http.StatusForbidden {
		t.Errorf("probe of a namespace not allowed: HTTP %d, want 403", code)
	}

	// The Prometheus project's own lint of the exposition.
	out, err := target.Local().RunInput(context.Background(), []byte(body), "promtool", "check", "metrics")
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// BenchmarkProbe1000PeersOverSSH: a central exporter probing a router with
// 1,000 peers over ssh. It reports the scrape that collects (ssh, the
// commands, checks, encoding) and, per iteration, the scrape the cache answers.
func BenchmarkProbe1000PeersOverSSH(b *testing.B) {
	l := labtest.Up(b, lab.Config{Name: "ct3", Topology: lab.SiteToSite})
	spec := labtest.SSHD(b, l, "b")
	addPeers(b, l.Target("b"), l.WGInterface("b"), 1000)
	p := NewProber(ProbeOptions{Allow: []string{"ssh:*"}, CacheTTL: time.Hour})
	u := testServer(b, &Site{Prober: p}) + "/probe?target=" + spec
	scrape := func() string {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			b.Fatal(err)
		}
		return string(body)
	}
	start := time.Now()
	first := scrape()
	collected := time.Since(start)
	if n := strings.Count(first, "wgperf_wireguard_peer_info{"); n != 1001 {
		b.Fatalf("probe sees %d peers, want 1001:\n%.2000s", n, first)
	}
	for b.Loop() {
		scrape()
	}
	b.ReportMetric(collected.Seconds()*1000, "collecting-scrape-ms")
	b.ReportMetric(float64(len(first))/1024, "text-KiB/scrape")
}
