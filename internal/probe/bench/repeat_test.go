package bench

import (
	"testing"
)

// cellOf runs Analyze on a tunnel and an underlay run of one direction and
// returns the cell with the two runs as the report holds them.
func cellOf(t *testing.T, tunnel, underlay *Run) (Cell, *Run, *Run) {
	t.Helper()
	r := &Report{Hops: 1, Runs: []Run{*tunnel, *underlay}}
	Analyze(r)
	if len(r.Cells) != 1 {
		t.Fatalf("cells %+v", r.Cells)
	}
	return r.Cells[0], &r.Runs[0], &r.Runs[1]
}

func TestUnsettled(t *testing.T) {
	steadyUp := run(PathTunnel, Upload, 1, recorded(t, "healthy-200m-bbr-upload-tunnel.json"))
	steadyUnder := run(PathUnderlay, Upload, 1, recorded(t, "healthy-200m-bbr-upload-underlay.json"))
	for _, tc := range []struct {
		name             string
		tunnel, underlay Run
		repeats          [][2]float64 // later samples: tunnel, underlay Mbit/s
		max              int
		want             bool
	}{
		{name: "a steady 200 Mbit/s link recorded in the lab: one sample settles it", tunnel: steadyUp, underlay: steadyUnder, max: 3, want: false},
		{name: "a tunnel bouncing 8..40 Mbit/s at 0.6 of a steady underlay: too close to call from 3 s",
			tunnel: run(PathTunnel, Upload, 1, synthetic(8, 40, 9)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)), max: 3, want: true},
		{name: "a bounce that clears the line: the tunnel carried that rate, one sample stands",
			tunnel: run(PathTunnel, Upload, 1, synthetic(20, 40, 25)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)), max: 3, want: false},
		{name: "the same bounce far below the line: one sample is enough",
			tunnel: run(PathTunnel, Upload, 1, synthetic(2, 6, 2.5)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)), max: 3, want: false},
		{name: "a steady tunnel just under the line: still settled, the runs agree to a percent",
			tunnel: run(PathTunnel, Upload, 1, synthetic(26.4, 26.5, 26.3)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 30.1, 30)), max: 3, want: false},
		{name: "one sample allowed: never repeated",
			tunnel: run(PathTunnel, Upload, 1, synthetic(8, 40, 9)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)), max: 1, want: false},
		{name: "two samples on the same side of the line: settled",
			tunnel: run(PathTunnel, Upload, 1, synthetic(8, 40, 9)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)),
			repeats: [][2]float64{{15, 30}}, max: 3, want: false},
		{name: "two samples either side of the line: a third decides",
			tunnel: run(PathTunnel, Upload, 1, synthetic(8, 40, 9)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)),
			repeats: [][2]float64{{29, 30}}, max: 3, want: true},
		{name: "three samples: the bound, the median decides",
			tunnel: run(PathTunnel, Upload, 1, synthetic(8, 40, 9)), underlay: run(PathUnderlay, Upload, 1, synthetic(30, 31, 30)),
			repeats: [][2]float64{{29, 30}, {12, 30}}, max: 3, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range tc.repeats {
				tc.tunnel.Repeats = append(tc.tunnel.Repeats, Repeat{Mbit: r[0]})
				tc.underlay.Repeats = append(tc.underlay.Repeats, Repeat{Mbit: r[1]})
			}
			c, tu, un := cellOf(t, &tc.tunnel, &tc.underlay)
			if got := Unsettled(c, tu, un, tc.max); got != tc.want {
				t.Errorf("ratio %.2f (expected %.2f), tunnel CV %.2f, underlay CV %.2f: unsettled %v, want %v",
					c.Ratio, c.Expected, tu.Stats.CV, un.Stats.CV, got, tc.want)
			}
		})
	}
}

// The cell and the throughput doctor judges take each path's median sample,
// so one odd run cannot set the verdict; the table shows the range.
func TestRepeatedCellTakesTheMedian(t *testing.T) {
	tunnel := run(PathTunnel, Upload, 1, synthetic(8, 40, 9))
	tunnel.Repeats = []Repeat{{Mbit: 29}, {Mbit: 28}}
	underlay := run(PathUnderlay, Upload, 1, synthetic(30, 30, 30))
	underlay.Repeats = []Repeat{{Mbit: 31}, {Mbit: 32}}
	r := &Report{Hops: 1, Runs: []Run{tunnel, underlay}}
	Analyze(r)
	c := r.Cells[0]
	if c.TunnelMbit != 28 || c.UnderlayMbit != 31 || c.Samples != 3 || !c.OK {
		t.Errorf("cell %+v: want tunnel 28 (median of 19, 28, 29), underlay 31, 3 samples, ok", c)
	}
	if got := r.Throughput().Up; got.Tunnel != 28 || got.Underlay != 31 {
		t.Errorf("throughput %+v", got)
	}
	if got, want := spreadText(r.Runs[0]), "28.0 (median of 3: 19.0..29.0)"; got != want {
		t.Errorf("table figure %q, want %q", got, want)
	}
}

// A loss-based tunnel stream at a healthy ratio is sampled again when its
// retransmits are too few to tell whether the path's loss pins its window;
// recorded on kernel WireGuard through a 40 ms WAN losing 2% both ways,
// CUBIC (9 retransmits of about 700 segments in the tunnel, 15 beside it).
func TestLossUnsettled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		retransmits int64      // the tunnel sample's
		underlayCC  string     // the underlay sample's congestion control
		repeats     [][2]int64 // later samples' retransmits: tunnel, underlay
		swing       bool
		max         int
		want        bool
	}{
		{name: "as recorded: 1.7% of both samples' segments, settled", retransmits: 9, underlayCC: "cubic", max: 3, want: false},
		{name: "3 in the tunnel, the underlay's counted beside: 1.3%, settled", retransmits: 3, underlayCC: "cubic", max: 3, want: false},
		{name: "3 in the tunnel beside a BBR underlay: 0.4%, within two errors of 0.5%", retransmits: 3, underlayCC: "bbr", max: 3, want: true},
		{name: "the same, one sample allowed", retransmits: 3, underlayCC: "bbr", max: 1, want: false},
		{name: "the same after a repeat that lost 1 more: 0.3%, still unsettled", retransmits: 3, underlayCC: "bbr", repeats: [][2]int64{{1, 0}}, max: 3, want: true},
		{name: "the same after a repeat that lost 9 more: 0.9%, settled", retransmits: 3, underlayCC: "bbr", repeats: [][2]int64{{9, 0}}, max: 3, want: false},
		{name: "1 retransmit: 0.14%, well below 0.5% even within two errors", retransmits: 1, underlayCC: "bbr", max: 3, want: false},
		{name: "no retransmit: nothing to tell", retransmits: 0, underlayCC: "bbr", max: 3, want: false},
		{name: "a swinging window is named anyway", retransmits: 3, underlayCC: "bbr", swing: true, max: 3, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := flatCwnd(recorded(t, "tcp-kernel-wan-cubic-tunnel.json"))
			res.Retransmits = tc.retransmits
			if tc.swing {
				res.Intervals[len(res.Intervals)-1].Cwnd[0] = 4 * 13680
			}
			under := recorded(t, "tcp-kernel-wan-cubic-underlay.json")
			under.Congestion = tc.underlayCC
			tunnel, underlay := run(PathTunnel, Upload, 1, res), run(PathUnderlay, Upload, 1, under)
			for _, r := range tc.repeats {
				tunnel.Repeats = append(tunnel.Repeats, Repeat{Mbit: tunnel.Result.Mbit(), Retransmits: r[0]})
				underlay.Repeats = append(underlay.Repeats, Repeat{Mbit: under.Mbit(), Retransmits: r[1]})
			}
			r := &Report{Hops: 1, Runs: []Run{tunnel, underlay}}
			Analyze(r)
			loss, n := r.pathLoss(r.Runs[0])
			if got := r.lossUnsettled(r.Cells[0], &r.Runs[0], &r.Runs[1], tc.max); got != tc.want {
				t.Errorf("path loss %.2f%% over %.0f retransmits, cell %+v: unsettled %v, want %v", loss*100, n, r.Cells[0], got, tc.want)
			}
		})
	}
}
