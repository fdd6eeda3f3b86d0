package verify

import (
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
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
		{"wg-mtu", []fix.Item{item(finding.ActSysctl, false), item(finding.ActWGMTU, false)}, true},
		{"mss clamp", []fix.Item{item(finding.ActMSSClamp, false)}, true},
		{"MTU already in place", []fix.Item{item(finding.ActWGMTU, true), item(finding.ActCongestion, false)}, false},
		{"congestion only", []fix.Item{item(finding.ActCongestion, false)}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := IsMTUPlan(&fix.Plan{Items: tt.items}); got != tt.want {
			t.Errorf("%s: IsMTUPlan = %v, want %v", tt.name, got, tt.want)
		}
	}
}
