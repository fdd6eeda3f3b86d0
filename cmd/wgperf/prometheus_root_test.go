//go:build !router

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// prometheusBinary is the Prometheus server: on PATH, or where the deps
// script unpacks it from Debian's package.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/local/bin/prometheus"); err == nil {
		return "/usr/local/bin/prometheus"
	}
	t.Skip("needs the prometheus server on PATH or at /usr/local/bin/prometheus (scripts/deps.sh unpacks it from Debian's prometheus package)")
	return ""
}

// freeLoopbackPort returns a TCP port of 127.0.0.1 nothing listens on now.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output for the test's messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProcess runs a program until the test ends, then kills it by its pid
// and waits for it.
func startProcess(t *testing.T, out io.Writer, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// getJSON fetches u and decodes its JSON into v.
func getJSON(u string, v any) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}

// TestPrometheusDiscoversInventory is issue 42's proof of the SD outputs: a
// real Prometheus discovers an inventory of the lab's two nodes twice, from
// the file_sd JSON "wgperf inventory --prometheus" writes (job
// wgperf-inventory) and from the exporter's own /sd, started with the same
// --inventory (http_sd, job wgperf-inventory-http); each job relabels the
// targets to the exporter's /probe?target= as deploy/prometheus/scrape.yml's
// jobs do, and scrapes both through the exporter (allowed the lab's
// namespaces only): its /api/v1/targets shows them up in each job with the
// inventory's group as a label, and a query of wgperf_collect_success
// returns a sample of each.
func TestPrometheusDiscoversInventory(t *testing.T) {
	testutil.RequireRoot(t)
	prom := prometheusBinary(t)
	l := labtest.Up(t, lab.Config{Name: "promsd"})
	exe := labtest.Binary(t)
	dir, err := os.MkdirTemp("", "wgperf-prometheus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // Prometheus' data directory among the rest

	specs := []string{"netns:" + l.Netns("a"), "netns:" + l.Netns("b")}
	inv := filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(inv, []byte("[sites]\n"+strings.Join(specs, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exporterOut := &lockedBuffer{}
	exporterAddr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	startProcess(t, exporterOut, exe, "exporter", "--web.listen-address", exporterAddr,
		"--probe.allow", "netns:"+lab.Netns("promsd", "*"), "--interval", "1h", "--inventory", inv)
	var sd, errOut bytes.Buffer
	if code := run([]string{"inventory", "--inventory", inv, "--prometheus"}, &sd, &errOut); code != exitOK {
		t.Fatalf("inventory --prometheus: exit %d: %s", code, errOut.String())
	}
	targets := filepath.Join(dir, "wgperf-targets.json")
	if err := os.WriteFile(targets, sd.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(`global:
  scrape_interval: 3s
  scrape_timeout: 3s
scrape_configs:
  - job_name: wgperf-inventory
    metrics_path: /probe
    file_sd_configs:
      - files: [`+targets+`]
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: `+exporterAddr+`
  - job_name: wgperf-inventory-http
    metrics_path: /probe
    http_sd_configs:
      - url: http://`+exporterAddr+`/sd
        refresh_interval: 2s
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: `+exporterAddr+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	promOut := &lockedBuffer{}
	startProcess(t, promOut, prom, "--config.file", config, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", promAddr)

	api := "http://" + promAddr + "/api/v1/"
	jobs := []string{"wgperf-inventory", "wgperf-inventory-http"}
	var want []string
	for _, job := range jobs {
		for _, s := range specs {
			want = append(want, job+" "+s)
		}
	}
	var up []string
	deadline := time.Now().Add(45 * time.Second)
	for {
		targets, err := activeTargets(api)
		up = up[:0]
		var state []string
		for _, tg := range targets {
			state = append(state, fmt.Sprintf("%s %s %s %q", tg.Labels["instance"], tg.Health, tg.ScrapeURL, tg.LastError))
			if tg.Health == "up" && tg.Labels["wgperf_group"] == "sites" &&
				strings.HasPrefix(tg.ScrapeURL, "http://"+exporterAddr+"/probe?target=") {
				up = append(up, tg.Labels["job"]+" "+tg.Labels["instance"])
			}
		}
		sort.Strings(up)
		if err == nil && strings.Join(up, ",") == strings.Join(want, ",") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus does not show the inventory's targets up after 45 s (%v): %v\nprometheus:\n%s\nexporter:\n%s",
				err, state, promOut.String(), exporterOut.String())
		}
		time.Sleep(time.Second)
	}
	var query struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	q := api + "query?query=" + url.QueryEscape(`wgperf_collect_success{job=~"wgperf-inventory.*"}`)
	if err := getJSON(q, &query); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range query.Data.Result {
		if len(r.Value) == 2 {
			got[r.Metric["job"]+" "+r.Metric["instance"]] = fmt.Sprint(r.Value[1])
		}
	}
	for _, w := range want {
		if got[w] != "1" {
			t.Errorf("wgperf_collect_success of %s in Prometheus: %q (all: %v)", w, got[w], got)
		}
	}
	t.Logf("Prometheus discovered %v through file_sd and http_sd and scraped them through %s/probe", up, exporterAddr)
}

// promTarget is one of Prometheus' active targets (/api/v1/targets).
type promTarget struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
	ScrapeURL string            `json:"scrapeUrl"`
}

// activeTargets asks the Prometheus whose API is at api for its active targets.
func activeTargets(api string) ([]promTarget, error) {
	var resp struct {
		Data struct {
			ActiveTargets []promTarget `json:"activeTargets"`
		} `json:"data"`
	}
	err := getJSON(api+"targets", &resp)
	return resp.Data.ActiveTargets, err
}
