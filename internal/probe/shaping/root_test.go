package shaping

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// A cap is applied for its run only, and the tbf the user had before is back afterwards.
func TestSweepRestoresQdiscLab(t *testing.T) {
	testutil.RequireTools(t, "iperf3", "tc")
	l := labtest.Up(t, lab.Config{Name: "wgb4", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, dev := l.Target("a"), l.WGInterface("a")
	if _, err := a.Run(ctx, "tc", "qdisc", "replace", "dev", dev, "root", "handle", "77:", "tbf", "rate", "180mbit", "burst", "1mb", "latency", "400ms"); err != nil {
		t.Fatal(err)
	}
	before, _ := a.Run(ctx, "tc", "qdisc", "show", "dev", dev)
	res, err := Run(ctx, Config{Client: a, Server: l.Target("b"), TunnelAddr: l.Node("b").TunnelAddr, Device: dev, Caps: []int{100}, Seconds: 2, Omit: 1, Options: Options{Short: true}})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := a.Run(ctx, "tc", "qdisc", "show", "dev", dev)
	if strings.TrimSpace(string(after)) != strings.TrimSpace(string(before)) {
		t.Errorf("qdisc not restored:\nbefore %s\nafter  %s", before, after)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("steps %+v", res.Steps)
	}
	t.Logf("uncapped (user tbf 180) %.1f Mbit/s, cap 100: %.1f Mbit/s, recommended %d, %.1fs", res.Steps[0].Stats.Mbit, res.Steps[1].Stats.Mbit, res.Recommended, res.Seconds)
	if m := res.Steps[1].Stats.Mbit; m < 80 || m > 105 {
		t.Errorf("capped at 100 Mbit/s the tunnel ran %.1f", m)
	}
	if res.Recommended != 0 {
		t.Errorf("a steady tunnel needs no cap, recommended %d", res.Recommended)
	}
}
