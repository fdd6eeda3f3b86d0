package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/probe/bench"
)

// The legs as the lab's hub measured them (lab up --rate 40 --hub-rate 10,
// doctor --via r: TestDoctorViaHub's figures): hop 2 carries a quarter of
// hop 1, so it is the path's limit both ways; legs within 80% of each other,
// or a slow first leg (the client's own link), name nothing.
func TestHubLegFindings(t *testing.T) {
	hops := func(up1, down1, up2, down2 float64) *bench.Report {
		return &bench.Report{HopUnderlay: []bench.HopRate{
			{Hop: 1, From: "netns:a", To: "netns:r", Addr: "198.51.100.1", UploadMbit: up1, DownloadMbit: down1},
			{Hop: 2, From: "netns:r", To: "netns:b", Addr: "203.0.113.2", UploadMbit: up2, DownloadMbit: down2},
		}}
	}
	m := Measured{Benched: true}
	m.Up.Tunnel, m.Down.Tunnel = 9.2, 9.1
	fs := hubLegFindings(hops(38.3, 38.3, 9.5, 9.5), m)
	if len(fs) != 2 {
		t.Fatalf("got %d findings, want one a direction", len(fs))
	}
	f := fs[0]
	if f.ID != check.PathHubLeg || f.Host != "netns:r" || !strings.Contains(f.Title, "hop 2 (netns:r → netns:b) 9.5 Mbit/s where the client's own leg carries 38.3") {
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
