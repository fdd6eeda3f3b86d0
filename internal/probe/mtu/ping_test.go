package mtu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
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
	healthy := &Result{Client: targettest.Spec("netns:a"), Addr: "203.0.113.2", PathMTU: 1500, SearchMax: 1500, WGMTU: 1440, MSSClamp: 1400}
	if fs := Findings(healthy); len(fs) != 0 {
		t.Errorf("healthy path: %v", fs)
	}
	// Frag-needed came back: PMTUD works, no black hole.
	icmp := &Result{Client: targettest.Spec("netns:a"), Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1401, FragNeededMTU: 1400, SearchMax: 1500}
	if fs := Findings(icmp); len(fs) != 0 {
		t.Errorf("PMTUD working: %v", fs)
	}
	hole := &Result{Client: targettest.Spec("netns:a"), ClientIface: "wg-a", Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1401, BlackHole: true,
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

// What a narrow hop does to the tunnel depends on the implementation: kernel
// WireGuard clears DF on its outer packets, so a DF black hole fragments them
// instead of eating them; a path that answers DF probes can still lose the
// tunnel's fragments, which MSS stepping shows.
func TestFindingsByImplementation(t *testing.T) {
	hole := Result{Client: targettest.Spec("netns:a"), ClientIface: "wg-a", Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1401, BlackHole: true,
		SearchMax: 1500, WGMTU: 1340, MSSClamp: 1300, ReferenceMbit: 60}
	passes := []MSSRun{{MSS: 1200, Mbit: 60, Healthy: true}, {MSS: 1380, Mbit: 57, Healthy: true}}
	cliff := []MSSRun{{MSS: 1200, Mbit: 60, Healthy: true}, {MSS: 1288, Mbit: 59, Healthy: true}, {MSS: 1296, Mbit: 0.1}}
	for _, tt := range []struct {
		name   string
		r      Result
		id     finding.ID
		sev    finding.Severity
		detail string
	}{
		{"kernel: the tunnel passes a DF black hole, fragmented", with(hole, "kernel", passes, 0, 0),
			"mtu.pmtud-blackhole", finding.Info, "fragments each full-size one"},
		{"kernel: the fragments are lost too", with(hole, "kernel", cliff, 1288, 1296),
			"mtu.pmtud-blackhole", finding.Critical, "fragments of its packets are lost"},
		{"userspace: a DF black hole stalls it", with(hole, "userspace", cliff, 1288, 1296),
			"mtu.pmtud-blackhole", finding.Critical, "retransmits the same oversized segments"},
		{"kernel: PMTUD works, fragments dropped on the path", with(Result{Client: targettest.Spec("netns:a"), ClientIface: "wg-a", Addr: "203.0.113.2",
			PathMTU: 1400, FirstFailed: 1401, FragNeededMTU: 1400, SearchMax: 1500, WGMTU: 1340, MSSClamp: 1300, ReferenceMbit: 60}, "kernel", cliff, 1288, 1296),
			"mtu.tunnel-too-large", finding.Critical, "kernel WireGuard, which clears DF"},
		{"userspace: PMTUD works, the tunnel's DF packets are refused", with(Result{Client: targettest.Spec("netns:a"), ClientIface: "wg-a", Addr: "203.0.113.2",
			PathMTU: 1400, FirstFailed: 1401, FragNeededMTU: 1400, SearchMax: 1500, WGMTU: 1340, MSSClamp: 1300, ReferenceMbit: 60}, "userspace", cliff, 1288, 1296),
			"mtu.tunnel-too-large", finding.Critical, "the narrow hop refuses"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := Findings(&tt.r)
			if len(fs) != 1 || fs[0].ID != tt.id || fs[0].Severity != tt.sev || !strings.Contains(fs[0].Detail, tt.detail) {
				t.Fatalf("findings %+v, want one %s %s saying %q", fs, tt.sev, tt.id, tt.detail)
			}
			if fs[0].Fixes[0].Action == nil || fs[0].Fixes[0].Action.Kind != remedy.KindWGMTU || fs[0].Fixes[0].Action.Params["mtu"] != "1340" {
				t.Errorf("first fix %+v, want the WireGuard MTU that fits", fs[0].Fixes[0])
			}
		})
	}
}

func with(r Result, impl string, runs []MSSRun, good, bad int) Result {
	r.Implementation, r.MSSRuns, r.MSSGood, r.MSSBad = impl, runs, good, bad
	return r
}
