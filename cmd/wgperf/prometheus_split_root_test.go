//go:build !router

package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/exporter"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
)

// TestPrometheusSplitsFleetAcrossExporters proves the README's split of a
// fleet past one exporter (issue 54): a real Prometheus discovers a lab
// fleet of ssh routers from an exporter's /sd (http_sd) in two jobs, each
// keeping the targets whose hashmod of the address falls to it and scraping
// them through its own exporter. Every router is up in exactly one job,
// both halves are present, each job's scrapes go to its own exporter, and
// every router's collection succeeded. The exporters run in this process
// (runExporter), so they reach the fleet with the lab's ssh settings.
func TestPrometheusSplitsFleetAcrossExporters(t *testing.T) {
	prom := prometheusBinary(t)
	f := labtest.Fleet(t, lab.FleetConfig{Name: "flsplit", Count: 8})
	dir, err := os.MkdirTemp("", "wgperf-prometheus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	ctx, cancel := context.WithCancel(context.Background())
	exporterOut := &lockedBuffer{}
	log, err := exporter.NewLogger(exporterOut, "info", "logfmt")
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	done := make(chan error, 2)
	for range 2 {
		addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
		addrs = append(addrs, addr)
		probe := exporter.ProbeOptions{Allow: []string{"ssh:root@10.200.0.0/16"}, CacheSize: exporter.DefaultProbeCacheSize}
		c := exporter.Command{Host: "local", Addrs: []string{addr}, TelemetryPath: "/metrics", Log: log,
			MaxConns: exporter.DefaultMaxConnections, Inventory: []string{f.Inventory}, Interval: time.Hour, Probe: probe}
		go func() { done <- exporter.RunCommand(ctx, c) }()
	}
	t.Cleanup(func() {
		cancel()
		for range 2 {
			<-done
		}
	})

	var jobs strings.Builder
	for shard, addr := range addrs {
		// Both jobs read the same target list (exporter 0's /sd); hashmod
		// keeps each target in one of them.
		fmt.Fprintf(&jobs, `  - job_name: wgperf-shard-%d
    metrics_path: /probe
    http_sd_configs:
      - url: http://%s/sd
        refresh_interval: 2s
    relabel_configs:
      - source_labels: [__address__]
        modulus: 2
        target_label: __tmp_hash
        action: hashmod
      - source_labels: [__tmp_hash]
        regex: "%d"
        action: keep
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: %s
`, shard, addrs[0], shard, addr)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte("global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\nscrape_configs:\n"+jobs.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	promOut := &lockedBuffer{}
	startProcess(t, promOut, prom, "--config.file", config, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", promAddr)

	api := "http://" + promAddr + "/api/v1/"
	type scraped struct{ job, exporter string }
	var byInstance map[string][]scraped
	deadline := time.Now().Add(40 * time.Second)
	for {
		targets, err := activeTargets(api)
		byInstance = map[string][]scraped{}
		up := 0
		for _, tg := range targets {
			u, _ := url.Parse(tg.ScrapeURL)
			host := ""
			if u != nil {
				host = u.Host
			}
			byInstance[tg.Labels["instance"]] = append(byInstance[tg.Labels["instance"]], scraped{tg.Labels["job"], host})
			if tg.Health == "up" {
				up++
			}
		}
		if err == nil && up == len(f.Specs) && len(byInstance) == len(f.Specs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus shows %d of %d routers up after 40 s (%v): %v\nprometheus:\n%s\nexporters:\n%s",
				up, len(f.Specs), err, byInstance, promOut.String(), exporterOut.String())
		}
		time.Sleep(time.Second)
	}
	perJob := map[string][]string{}
	for _, spec := range f.Specs {
		got := byInstance[spec]
		if len(got) != 1 {
			t.Errorf("%s is scraped by %d jobs, want 1: %v", spec, len(got), got)
			continue
		}
		shard := strings.TrimPrefix(got[0].job, "wgperf-shard-")
		if want := addrs[shard[0]-'0']; got[0].exporter != want {
			t.Errorf("%s: job %s scrapes it through %s, want its own exporter %s", spec, got[0].job, got[0].exporter, want)
		}
		perJob[got[0].job] = append(perJob[got[0].job], spec)
	}
	for _, job := range []string{"wgperf-shard-0", "wgperf-shard-1"} {
		if len(perJob[job]) == 0 {
			t.Errorf("job %s has no routers: the split is not in halves (%v)", job, perJob)
		}
	}

	// Each router's collection worked, through its own shard's exporter.
	var query struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	var ok []string
	for time.Now().Before(deadline.Add(10 * time.Second)) {
		if err := getJSON(api+"query?query="+url.QueryEscape(`wgperf_collect_success == 1`), &query); err != nil {
			t.Fatal(err)
		}
		ok = ok[:0]
		for _, r := range query.Data.Result {
			ok = append(ok, r.Metric["instance"])
		}
		if len(ok) == len(f.Specs) {
			break
		}
		time.Sleep(time.Second)
	}
	sort.Strings(ok)
	want := slices.Clone(f.Specs)
	sort.Strings(want)
	if !slices.Equal(ok, want) {
		t.Errorf("routers collected (wgperf_collect_success 1): %v\nwant %v\nexporters:\n%s", ok, want, exporterOut.String())
	}
	t.Logf("Prometheus split %d routers across two exporters: %v", len(f.Specs), perJob)
}
