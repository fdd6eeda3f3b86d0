package udppath

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func recorded(t *testing.T, name string) *iperf.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "iperf", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := iperf.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Recorded in the lab: R polices UDP to a quarter of a 200 Mbit/s link
// (lab --udp-police 25) while TCP outside the tunnel carries 190; UDP
// offered at 190 loses 60%. Lost at the receiver's own socket, the same
// datagrams would prove nothing about the path; a clean path or 3% of random
// loss is no policer.
func TestAnalyze(t *testing.T) {
	c := Config{Client: targettest.New("netns:wgl-fd2-a"), Server: targettest.New("netns:wgl-fd2-b"), Addr: "203.0.113.2",
		Direction: bench.Upload, TCPMbit: 190.6, SenderInterface: "wg-fd2-a"}
	policed := recorded(t, "udp-policed-25pct.json")
	for _, tc := range []struct {
		name     string
		res      *iperf.Result
		drops    int64
		severity finding.Severity // 0: no finding
	}{
		{"policed to a quarter", policed, 0, finding.Critical},
		{"the same losses at the receiver's socket", policed, policed.LostPackets, 0},
		{"a clean path", recorded(t, "udp-50m.json"), 0, 0},
		{"3% random loss", recorded(t, "udp-20m-loss3.json"), 0, 0},
	} {
		r := Analyze(c, tc.res, tc.drops)
		switch {
		case tc.severity == 0 && len(r.Findings) != 0:
			t.Errorf("%s: path loss %.2f, findings %v; want none", tc.name, r.PathLoss, r.Findings)
		case tc.severity != 0 && (len(r.Findings) != 1 || r.Findings[0].Severity != tc.severity):
			t.Errorf("%s: path loss %.2f, findings %v; want one %s", tc.name, r.PathLoss, r.Findings, tc.severity)
		case tc.severity != 0:
			f := r.Findings[0]
			if f.ID != catalog.PathUDPPoliced || f.Host.String() != "netns:wgl-fd2-a" || f.Interface != "wg-fd2-a" || len(f.Fixes) == 0 {
				t.Errorf("%s: %+v", tc.name, f)
			}
			for _, fx := range f.Fixes {
				if fx.Action != nil {
					t.Errorf("%s: the path is the cause, yet the finding carries an automatic fix %v", tc.name, fx.Action)
				}
			}
		}
	}
}

// The download's datagrams come from the server: its sender is the server.
func TestAnalyzeDownload(t *testing.T) {
	c := Config{Client: targettest.New("a"), Server: targettest.New("b"), Addr: "203.0.113.2", Direction: bench.Download, TCPMbit: 190}
	r := Analyze(c, recorded(t, "udp-policed-25pct.json"), 0)
	if len(r.Findings) != 1 || r.Findings[0].Host.String() != "b" {
		t.Errorf("findings %+v, want one on b", r.Findings)
	}
}
