package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Throughput reads the single-stream TCP runs of a recorded bench (lab, 200
// Mbit/s), leaving parallel and UDP runs; TunnelMeasured counts a stalled
// run as a measurement (0 Mbit/s) and any other failed run as none.
func TestThroughput(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "report", "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := rep.Throughput()
	if int(got.Up.Tunnel) != 180 || int(got.Down.Tunnel) != 181 || int(got.Up.Underlay) != 190 || int(got.Down.Underlay) != 190 ||
		!rep.TunnelMeasured() || !rep.UnderlayMeasured() {
		t.Errorf("recorded bench: %+v, tunnel measured %v, underlay %v", got, rep.TunnelMeasured(), rep.UnderlayMeasured())
	}
	if w := got.Worst(); w < 0.94 || w > 0.96 || w != min(got.Up.Ratio(), got.Down.Ratio()) {
		t.Errorf("worst ratio %.3f", w)
	}

	stalled := Run{Spec: Spec{Path: PathTunnel, Direction: Download, Streams: 1},
		Error: "netns:a: iperf3 stalled: the test to 10.77.0.2 did not finish within 11s"}
	refused := stalled
	refused.Error = "netns:a: cannot reach the iperf3 server"
	up := rep.Runs[0]
	for _, tt := range []struct {
		name string
		runs []Run
		ok   bool
	}{
		{"download stalled", []Run{up, stalled}, true},
		{"download failed otherwise", []Run{up, refused}, false},
		{"upload only", []Run{up}, false},
	} {
		r := &Report{Runs: tt.runs}
		got := r.Throughput()
		if r.TunnelMeasured() != tt.ok || int(got.Up.Tunnel) != 180 || got.Down.Tunnel != 0 || r.UnderlayMeasured() {
			t.Errorf("%s: %+v, measured %v, want %v", tt.name, got, r.TunnelMeasured(), tt.ok)
		}
	}
	var none *Report
	if none.TunnelMeasured() || none.Throughput() != (Throughput{}) {
		t.Error("no bench measured something")
	}
}
