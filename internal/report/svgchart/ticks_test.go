package svgchart

import (
	"math"
	"slices"
	"testing"
)

// TestTicks: round steps, at most maxTicks of them, labels without trailing
// zeros, whole numbers on counting axes. The ranges are the report's: a
// bench's Mbit/s and KiB with 5% headroom, iperf3's interval ends (a few
// microseconds past the second), a path-MTU search's sizes and probe numbers.
func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		whole  bool
		want   []string
	}{
		{"Mbit/s up to 200", 0, 210, false, []string{"0", "50", "100", "150", "200"}},
		{"cwnd KiB up to 500", 0, 525, false, []string{"0", "100", "200", "300", "400", "500"}},
		{"iperf3 interval ends, 2 s run", 1.000035, 2.000041, false, []string{"1.2", "1.4", "1.6", "1.8", "2"}},
		{"iperf3 interval ends, 4 s run", 1.000035, 4.000041, false, []string{"1.5", "2", "2.5", "3", "3.5", "4"}},
		{"whole seconds", 1, 4, false, []string{"1", "2", "3", "4"}},
		{"quarter steps", 0, 1.4, false, []string{"0", "0.25", "0.5", "0.75", "1", "1.25"}},
		{"path-MTU sizes", 933.3, 1528.3, false, []string{"1000", "1100", "1200", "1300", "1400", "1500"}},
		{"probe numbers", 0.5, 13.5, true, []string{"2", "4", "6", "8", "10", "12"}},
		{"failed pings", 0, 5.25, true, []string{"0", "1", "2", "3", "4", "5"}},
		{"counts below one", 0, 1.05, true, []string{"0", "1"}},
		{"2.5 is no count", 0, 14, true, []string{"0", "5", "10"}},
		{"small values", 0, 0.0021, false, []string{"0", "0.0005", "0.001", "0.0015", "0.002"}},
		{"around zero", -1, 1, false, []string{"-1", "-0.5", "0", "0.5", "1"}},
		{"bytes", 0, 4194304, false, []string{"0", "1000000", "2000000", "3000000", "4000000"}},
		{"empty range", 5, 5, false, nil},
		{"reversed", 5, 1, false, nil},
		{"not a number", math.NaN(), 1, false, nil},
		{"endless", 0, math.Inf(1), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks := Ticks(tc.lo, tc.hi, tc.whole)
			var got []string
			for _, tk := range ticks {
				got = append(got, tk.Label)
				if tk.Value < tc.lo-1e-9 || tk.Value > tc.hi+1e-9 {
					t.Errorf("tick %s at %v is outside %v..%v", tk.Label, tk.Value, tc.lo, tc.hi)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Ticks(%v, %v, %v) = %q, want %q", tc.lo, tc.hi, tc.whole, got, tc.want)
			}
		})
	}
}
