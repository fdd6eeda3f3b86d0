package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

func TestIsMTUPlan(t *testing.T) {
	item := func(kind string, done bool) fix.Item {
		return fix.Item{Action: finding.Action{Kind: kind}, Step: fix.Step{Done: done}}
	}
	tests := []struct {
		name  string
		items []fix.Item
		want  bool
	}{
		{"wg-mtu", []fix.Item{item(remedy.KindSysctl, false), item(remedy.KindWGMTU, false)}, true},
		{"mss clamp", []fix.Item{item(remedy.KindMSSClamp, false)}, true},
		{"MTU already in place", []fix.Item{item(remedy.KindWGMTU, true), item(remedy.KindCongestion, false)}, false},
		{"congestion only", []fix.Item{item(remedy.KindCongestion, false)}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := IsMTUPlan(&fix.Plan{Items: tt.items}); got != tt.want {
			t.Errorf("%s: IsMTUPlan = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A verification given the figures measured just before the change reports
// them as its "before" without running anything (nil hosts would fail), and
// an MTU verification reuses the path MTU search when it probed the same
// endpoint.
func TestPriorIsTheFirstMeasurement(t *testing.T) {
	ep := discover.Endpoints{TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2", ClientInterface: "lo"}
	prior := &Prior{Tunnel: bench.Throughput{Down: bench.DirRate{Tunnel: 0.3}}, Source: "from doctor's bench"}
	m, err := benchMeasure(Config{Prior: prior}, ep)(context.Background())
	if err != nil || m.Value != 0.15 || !strings.Contains(m.Detail, "upload 0.0, download 0.3") || !strings.Contains(m.Detail, "doctor's bench") {
		t.Errorf("bench verification's first measurement: %+v, %v", m, err)
	}

	prior.MTU = &mtu.Result{Addr: "203.0.113.2", PathMTU: 1400, WGMTU: 1340}
	m, err = mtuMeasure(Config{Host: target.Local(), Prior: prior}, ep)(context.Background())
	if err != nil || !strings.Contains(m.Detail, "path MTU 1400") || !strings.Contains(m.Detail, "lo MTU") || !strings.Contains(m.Detail, "too large: at most 1340") {
		t.Errorf("MTU verification's first measurement: %+v, %v", m, err)
	}
}
