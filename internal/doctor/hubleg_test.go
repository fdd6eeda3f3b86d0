package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The legs as the lab's hub measured them (lab up --rate 40 --hub-rate 10,
// doctor --via r: TestDoctorViaHub's figures): hop 2 carries a quarter of
// hop 1, so it is the path's limit both ways; legs within 80% of each other,
// or a slow first leg (the client's own link), name nothing.
func TestHubLegFindings(t *testing.T) {
	hops := func(up1, down1, up2, down2 float64) *bench.Report {
		return &bench.Report{HopUnderlay: []bench.HopRate{
			{Hop: 1, From: targettest.Spec("netns:a"), To: targettest.Spec("netns:r"), Addr: "198.51.100.1", UploadMbit: up1, DownloadMbit: down1},
			{Hop: 2, From: targettest.Spec("netns:r"), To: targettest.Spec("netns:b"), Addr: "203.0.113.2", UploadMbit: up2, DownloadMbit: down2},
		}}
	}
	m := Measured{Benched: true}
	m.Up.Tunnel, m.Down.Tunnel = 9.2, 9.1
	fs := hubLegFindings(hops(38.3, 38.3, 9.5, 9.5), m)
	if len(fs) != 2 {
		t.Fatalf("got %d findings, want one a direction", len(fs))
	}
	f := fs[0]
	if f.ID != catalog.PathHubLeg || f.Host.String() != "netns:r" || !strings.Contains(f.Title, "hop 2 (netns:r → netns:b) 9.5 Mbit/s where the client's own leg carries 38.3") {
		t.Errorf("finding %s on %s: %s", f.ID, f.Host, f.Title)
	}
	if got := f.Fixes[0].Commands[1]; !strings.HasPrefix(got, "iperf3 -c 203.0.113.2 -t 30") {
		t.Errorf("command %q", got)
	}
	for _, tc := range []struct {
		name string
		b    *bench.Report
	}{
		{"legs alike", hops(38, 38, 35, 36)},
		{"the client's own leg is the slow one", hops(9.5, 9.5, 38, 38)},
		{"a leg not measured", hops(38, 38, 0, 0)},
		{"no hubs", &bench.Report{}},
	} {
		if fs := hubLegFindings(tc.b, m); len(fs) != 0 {
			t.Errorf("%s: %d findings: %s", tc.name, len(fs), fs[0].Title)
		}
	}
}

// A hub's offline road warriors (one grouped, critical wg.handshake-stale on
// the hub) are not the cause of a spoke's tunnel that the bench crossed at
// full rate: neither a cause nor what makes the status; they stay in
// Findings. When the bench could not cross, they are causes again.
func TestOtherPeersAreNotTheTunnelsCause(t *testing.T) {
	stale := finding.Finding{ID: catalog.WGHandshakeStale, Severity: finding.Critical, Host: targettest.Spec("ssh:hub"), Interface: "wg0", Title: "998 peers of wg0 are down"}
	r := &Report{Client: targettest.Spec("ssh:hub"), Server: targettest.Spec("ssh:b"), passive: map[causeKey]bool{}}
	r.Measured = Measured{Benched: true, Client: targettest.Spec("ssh:hub"), Server: targettest.Spec("ssh:b"), Expected: bench.SingleHopRatio}
	r.Measured.Up = bench.DirRate{Tunnel: 96, Underlay: 100}
	r.Measured.Down = bench.DirRate{Tunnel: 95, Underlay: 100}
	r.judge([]finding.Finding{stale})
	if len(r.Causes) != 0 || r.Status != StatusHealthy || len(r.Findings) != 1 || len(r.otherPeers) != 1 {
		t.Errorf("bench crossed: causes %v, status %s, %d findings, %d other peers", r.Causes, r.Status, len(r.Findings), len(r.otherPeers))
	}
	r.Unreachable = &Unreachable{Where: "10.0.0.2:5299", Why: "timed out"}
	r.judge([]finding.Finding{stale})
	if len(r.Causes) != 1 || r.Status != StatusSlow {
		t.Errorf("unreachable: causes %v, status %s; want the stale peers a cause", r.Causes, r.Status)
	}
}
