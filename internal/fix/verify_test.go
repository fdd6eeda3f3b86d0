package fix

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/finding"
)

func TestIsMTUPlan(t *testing.T) {
	item := func(kind string, done bool) Item {
		return Item{Action: finding.Action{Kind: kind}, Step: Step{Done: done}}
	}
	tests := []struct {
		name  string
		items []Item
		want  bool
	}{
		{"wg-mtu", []Item{item(finding.ActSysctl, false), item(finding.ActWGMTU, false)}, true},
		{"mss clamp", []Item{item(finding.ActMSSClamp, false)}, true},
		{"MTU already in place", []Item{item(finding.ActWGMTU, true), item(finding.ActCongestion, false)}, false},
		{"congestion only", []Item{item(finding.ActCongestion, false)}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := IsMTUPlan(&Plan{Items: tt.items}); got != tt.want {
			t.Errorf("%s: IsMTUPlan = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestVerificationWriteText(t *testing.T) {
	m := func(v float64, d string) Measurement {
		return Measurement{Name: "tunnel throughput", Value: v, Unit: "Mbit/s", Detail: d}
	}
	tests := []struct {
		name string
		v    Verification
		want string
	}{
		{"kept", Verification{Before: m(0.2, "upload 0.1, download 0.3 Mbit/s"), After: m(183.3, ""), Kept: true},
			"Verify (tunnel throughput):\n" +
				"  before    0.2 Mbit/s   (upload 0.1, download 0.3 Mbit/s)\n" +
				"  after   183.3 Mbit/s\n" +
				"  kept: the change helped (+91550.0%)\n"},
		{"rolled back", Verification{Before: m(183, ""), After: m(182.4, "")},
			"Verify (tunnel throughput):\n" +
				"  before  183.0 Mbit/s\n" +
				"  after   182.4 Mbit/s\n" +
				"  rolled back: the change did not help (-0.3%; needs more than +2%)\n"},
		{"nothing before", Verification{Before: m(0, ""), After: m(0, "")},
			"Verify (tunnel throughput):\n" +
				"  before  0.0 Mbit/s\n" +
				"  after   0.0 Mbit/s\n" +
				"  rolled back: the change did not help (no figure before; needs more than +2%)\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.v.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got)\n%s", tt.name, diff)
		}
	}
}
