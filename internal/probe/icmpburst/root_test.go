package icmpburst

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
)

// The multi-WAN case's banIP rule on A's uplink: one-shot pings fail, the persistent
// ping does not, and the rule's counter grows.
func TestICMPBurstLab(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "wgb3", Topology: lab.SiteToSite, ICMPLimit: 25})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Host: l.Target("a"), Targets: []string{"198.51.100.1", l.Node("b").UnderlayAddr}, Count: 15})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one-shot %d/%d failed, persistent %d/%d, counters %v, %.1fs", res.OneShot.Failed, res.OneShot.Sent,
		res.Persistent.Failed, res.Persistent.Sent, res.Grew, res.Seconds)
	if res.OneShot.Failed == 0 || res.Persistent.Failed != 0 {
		t.Errorf("one-shot %d failed, persistent %d: want failures only one-shot", res.OneShot.Failed, res.Persistent.Failed)
	}
	if len(res.Grew) == 0 {
		t.Error("no counter grew")
	}
	if len(res.Findings) != 1 || res.Findings[0].ID != "icmp.ratelimit-drops" {
		t.Errorf("findings %+v", res.Findings)
	}
}
