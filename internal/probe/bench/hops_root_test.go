package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// HubLab is the road-warrior hub lab the --via tests measure: A —— H at
// 40 Mbit/s, H —— B at 10 (both ways), far below what this machine carries
// through two userspace tunnels, so the verdict does not depend on its speed.
func HubLab(name string) lab.Config {
	return lab.Config{Name: name, Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 40}, HubMbit: 10}
}

// RecordEnv, set to a folder, makes TestBenchViaHub keep its bench report
// and its runs' iperf3 -J documents there (the fixtures of TestAnalyzeHops).
const RecordEnv = "WGPERF_RECORD_HOPS"

// Through a road-warrior hub whose second hop is 4x slower than its first,
// bench --via measures each hop's own underlay, judges the tunnel against
// the second (the slowest), and samples the hub's CPUs during the tunnel
// runs; the first hop's underlay alone would have called the tunnel slow.
func TestBenchViaHub(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, HubLab("wgh39"))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg := Config{Client: l.Target("a"), Server: l.Target("b"), Quick: true, Seconds: 3, Omit: 1}
	if dir := os.Getenv(RecordEnv); dir != "" {
		cfg.IperfJSONDir = dir
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Without --via the tunnel is found through the hub (A's one peer
	// carries B's address), with no one underlay to measure.
	if ep, err := discover.Tunnel(ctx, l.Target("a"), l.Target("b")); err != nil || !ep.Hub.Found() || ep.UnderlayAddr != "" ||
		ep.Hub.Addr() != l.Node("r").UnderlayAddr || ep.TunnelAddr != l.Node("b").TunnelAddr {
		t.Errorf("without --via: %+v, %v; want B's tunnel address through the hub at %s", ep, err, l.Node("r").UnderlayAddr)
	}
	if err := cfg.DiscoverVia(ctx, []target.Target{l.Target("r")}); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Legs) != 2 || cfg.Legs[0].Addr != l.Node("r").UnderlayAddr || cfg.Legs[1].Addr != l.Node("b").UnderlayAddr ||
		cfg.TunnelAddr != l.Node("b").TunnelAddr || cfg.Hops != 2 || cfg.UnderlayAddr != "" {
		t.Fatalf("legs %+v, tunnel %s, hops %d, underlay %q", cfg.Legs, cfg.TunnelAddr, cfg.Hops, cfg.UnderlayAddr)
	}
	rep, err := Measure(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if dir := os.Getenv(RecordEnv); dir != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "bench.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(rep.HopUnderlay) != 2 {
		t.Fatalf("hops %+v", rep.HopUnderlay)
	}
	h1, h2 := rep.HopUnderlay[0], rep.HopUnderlay[1]
	for _, x := range []float64{h1.UploadMbit, h1.DownloadMbit} {
		if x < 30 || x > 42 {
			t.Errorf("hop 1 (shaped at 40): %+v", h1)
		}
	}
	for _, x := range []float64{h2.UploadMbit, h2.DownloadMbit} {
		if x < 7 || x > 10.5 {
			t.Errorf("hop 2 (shaped at 10): %+v", h2)
		}
	}
	if len(rep.Cells) != 2 {
		t.Fatalf("cells %+v", rep.Cells)
	}
	for _, c := range rep.Cells {
		if c.Hop != 2 || !c.OK || c.Expected != MultiHopRatio {
			t.Errorf("%s: judged against hop %d's underlay %.1f, ratio %.2f (ok %v, expected %.2f); want hop 2's, ok", c.Direction, c.Hop, c.UnderlayMbit, c.Ratio, c.OK, c.Expected)
		}
		first := h1.UploadMbit
		if c.Direction == Download {
			first = h1.DownloadMbit
		}
		// The first hop alone (what one underlay between client and hub says)
		// overstates the path: against it the tunnel would be below 50%.
		if c.TunnelMbit/first >= MultiHopRatio {
			t.Errorf("%s: tunnel %.1f is %.0f%% of the first hop's %.1f: the lab does not show the first hop overstating the path", c.Direction, c.TunnelMbit, 100*c.TunnelMbit/first, first)
		}
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(string(f.ID), "throughput.") {
			t.Errorf("a tunnel at its slowest hop's rate: %s %s", f.ID, f.Title)
		}
	}
	hub := l.Target("r").String()
	if len(rep.Via) != 1 || rep.Via[0].String() != hub {
		t.Errorf("via %q, want %s", rep.Via, hub)
	}
	for _, run := range rep.Runs {
		if run.Path == PathTunnel && (len(run.Hubs) != 1 || run.Hubs[0].Host.String() != hub || len(run.Hubs[0].CPUBusy) == 0) {
			t.Errorf("%s: hubs' counters %+v", run.Spec, run.Hubs)
		}
		if run.Path != PathTunnel && len(run.Hubs) != 0 {
			t.Errorf("%s: hub counters on an underlay run", run.Spec)
		}
	}
	if !strings.Contains(text.String(), "hub "+hub+": busiest CPU") {
		t.Errorf("the text does not report the hub's CPU")
	}
}
