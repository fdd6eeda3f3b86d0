package doctor

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// Doctor --via on the road-warrior hub lab (A —— H at 40 Mbit/s, H —— B at
// 10): each hop measured, the tunnel judged against hop 2 (H → B, the
// limit), no throughput finding but the hub's leg named as the limit; without --via it finds the tunnel through the
// hub (A's one peer carries B's address), names the hub, measures the tunnel end to end and judges no ratio.
func TestDoctorViaHub(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ping")
	l := labtest.Up(t, lab.Config{Name: "drh39", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 40}, HubMbit: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	old, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Hops: 2})
	if err != nil {
		t.Fatal(err)
	}
	noUndeclared(t, old)
	// Without --via the hub is found from A's routing (its one peer carries
	// B's address) and named; the tunnel is measured end to end, and with no
	// leg's underlay the ratio is not judged.
	if old.Status != StatusUnjudged || !old.Measured.Benched || old.Bench == nil || old.Measured.Up.Tunnel <= 0 {
		t.Errorf("without --via: status %s, benched %v, up %.1f; want unjudged, the tunnel measured", old.Status, old.Measured.Benched, old.Measured.Up.Tunnel)
	}
	if old.Hub == nil || old.Hub.Measured || old.Hub.Addr() != l.Node("r").UnderlayAddr || !old.Hub.Same() {
		t.Errorf("without --via: hub %+v, want the hub at %s named, unmeasured", old.Hub, l.Node("r").UnderlayAddr)
	}
	if !slices.ContainsFunc(old.NotJudged, func(s string) bool { return strings.Contains(s, "--via ssh:root@"+l.Node("r").UnderlayAddr) }) {
		t.Errorf("without --via: not judged %q, want the hub's --via", old.NotJudged)
	}

	hub := l.Target("r")
	rep, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Via: []target.Target{hub}})
	if err != nil {
		t.Fatal(err)
	}
	noUndeclared(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	// Healthy throughput; the lab's nodes share this machine's CPUs, whose
	// load (another job's too) may add warnings, which make it "problems".
	if rep.Status != StatusProblems {
		t.Errorf("status %s, want problems: the tunnel runs at its slowest hop's rate, which is far below the client's own", rep.Status)
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(string(f.ID), "throughput.") {
			t.Errorf("a tunnel at its slowest hop's rate: %s %s", f.ID, f.Title)
		}
	}
	// The hub's leg is the path's limit: the verdict, on the hub.
	if v := rep.Verdict(); v == nil || v.Finding.ID != catalog.PathHubLeg || v.Finding.Host.String() != hub.String() {
		t.Errorf("verdict %+v, want %s on the hub", v, catalog.PathHubLeg)
	}
	if !strings.Contains(rep.Threshold, "through "+hub.String()) {
		t.Errorf("threshold %q", rep.Threshold)
	}
	if rep.Bench == nil || len(rep.Bench.HopUnderlay) != 2 {
		t.Fatalf("bench %+v", rep.Bench)
	}
	h2 := rep.Bench.HopUnderlay[1]
	if h2.From.String() != hub.String() || rep.Measured.Up.Underlay != h2.UploadMbit || rep.Measured.Down.Underlay != h2.DownloadMbit ||
		rep.Measured.Expected != bench.MultiHopRatio || rep.Measured.Up.Ratio() < bench.MultiHopRatio || rep.Measured.Down.Ratio() < bench.MultiHopRatio {
		t.Errorf("measured %+v against hops %+v: want hop 2's underlay, expected %.2f", rep.Measured, rep.Bench.HopUnderlay, bench.MultiHopRatio)
	}
	for _, want := range []string{"hop 2 (" + hub.String() + " → " + l.Target("b").String() + ")", "slowest", "hub " + hub.String() + ": busiest CPU"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

// A road-warrior hub on a VPS: the hub's wireguard-go in a cgroup limited to
// 2% of one CPU (lab --cpu-quota with --hub-rate), which it spends twice per
// packet. Doctor --via judges the tunnel against hop 2 (60 Mbit/s, A —— H at
// 80) and finds it slow, and the quota's throttling during the bench, read
// on the hub, is the verdict: cpu.quota-throttled on the hub host. A quota
// is a share of one CPU: 3% carried 10 Mbit/s here through both of the
// hub's tunnels, so 2% stays far below 50% of 60 on a machine several times
// as fast.
func TestDoctorViaHubCPUQuota(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ping")
	l := labtest.Up(t, lab.Config{Name: "drq39", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 80}, HubMbit: 60, CPUQuotaPct: 2, WireGuard: lab.Userspace})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	hub := l.Target("r")
	rep, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Via: []target.Target{hub}})
	if err != nil {
		t.Fatal(err)
	}
	noUndeclared(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if rep.Status != StatusSlow {
		t.Errorf("status %s, want slow", rep.Status)
	}
	if rep.Bench == nil || len(rep.Bench.HopUnderlay) != 2 || rep.Measured.Up.Underlay != rep.Bench.HopUnderlay[1].UploadMbit {
		t.Fatalf("measured %+v", rep.Measured)
	}
	v := rep.Verdict()
	if v == nil || v.Finding.ID != catalog.CPUQuotaThrottled || v.Finding.Host.String() != hub.String() {
		t.Errorf("verdict %+v, want %s on %s", v, catalog.CPUQuotaThrottled, hub)
	}
}
