package mtu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Recorded with iputils ping in a lab whose R—B link has MTU 1400.
func TestParsePing(t *testing.T) {
	tests := []struct {
		file string
		want Ping
	}{
		{"pass.txt", Ping{Received: true, RTTms: 0.045}},
		{"frag-needed.txt", Ping{MTU: 1400}},                       // R's ICMP came back
		{"local-too-long.txt", Ping{MTU: 1400, Local: true}},       // the kernel cached it
		{"local-iface-too-long.txt", Ping{MTU: 1500, Local: true}}, // larger than our own link
		{"silent-loss.txt", Ping{}},                                // R drops frag-needed: a black hole
		{"unreachable.txt", Ping{Error: "Destination Net Unreachable"}},
	}
	for _, tt := range tests {
		f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "ping", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParsePing(f)
		f.Close()
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v (%v), want %+v", tt.file, got, err, tt.want)
		}
	}
}

func TestFindings(t *testing.T) {
	healthy := &Result{Client: "netns:a", Addr: "203.0.113.2", PathMTU: 1500, SearchMax: 1500, WGMTU: 1440, MSSClamp: 1400}
	if fs := Findings(healthy); len(fs) != 0 {
		t.Errorf("healthy path: %v", fs)
	}
	// Frag-needed came back: PMTUD works, no black hole.
	icmp := &Result{Client: "netns:a", Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1401, FragNeededMTU: 1400, SearchMax: 1500}
	if fs := Findings(icmp); len(fs) != 0 {
		t.Errorf("PMTUD working: %v", fs)
	}
	hole := &Result{Client: "netns:a", ClientIface: "wg-a", Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1401, BlackHole: true,
		SearchMax: 1500, WGMTU: 1340, MSSClamp: 1300, ReferenceMbit: 178, MSSGood: 1288, MSSBad: 1296,
		MSSRuns: []MSSRun{{MSS: 1200, Mbit: 178, Healthy: true}, {MSS: 1380, Stalled: true}, {MSS: 1288, Mbit: 176, Healthy: true}, {MSS: 1296, Mbit: 0.05}}}
	fs := Findings(hole)
	if len(fs) != 1 || fs[0].ID != "mtu.pmtud-blackhole" || fs[0].Severity != finding.Critical {
		t.Fatalf("black hole: %+v", fs)
	}
	var wgmtu, clamp *finding.Action
	for _, fx := range fs[0].Fixes {
		if fx.Action != nil && fx.Action.Kind == remedy.KindWGMTU {
			wgmtu = fx.Action
		}
		if fx.Action != nil && fx.Action.Kind == remedy.KindMSSClamp {
			clamp = fx.Action
		}
	}
	if wgmtu == nil || wgmtu.Params["mtu"] != "1340" || wgmtu.Params["interface"] != "wg-a" || clamp == nil || clamp.Params["mss"] != "1300" {
		t.Errorf("fixes: wg-mtu %+v, mss-clamp %+v", wgmtu, clamp)
	}
	if len(fs[0].Evidence) != 5 {
		t.Errorf("evidence %+v: want DF probes and the MSS cliff", fs[0].Evidence)
	}
}
