package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// steal is cpu.steal as the check reports pct% of the CPU time stolen
// during the bench.
func steal(t *testing.T, host string, pct uint64) finding.Finding {
	t.Helper()
	f, ok := check.CPUStealFinding(targettest.Spec(host), nil, []facts.CPUTimes{{CPU: "cpu", User: 5000, Idle: 5000 - pct*100, Steal: pct * 100}}, "during the bench")
	if !ok {
		t.Fatalf("no steal finding at %d%%", pct)
	}
	return f
}

// policed is path.udp-policed as the UDP run outside the tunnel reports it:
// offered at the underlay's rate, arrived what arrived.
func policed(t *testing.T, offered, arrived float64) finding.Finding {
	t.Helper()
	c := udppath.Config{Client: targettest.New("netns:wgl-x-a"), Server: targettest.New("netns:wgl-x-b"), Addr: "203.0.113.2",
		Direction: bench.Upload, TCPMbit: offered}
	packets := int64(offered * 1e6 * 2 / 8 / 1448)
	lost := int64(float64(packets) * (1 - arrived/offered))
	r := udppath.Analyze(c, &iperf.Result{Protocol: "udp", SentMbit: offered, ReceivedMbit: arrived, Packets: packets, LostPackets: lost}, 0)
	if len(r.Findings) != 1 {
		t.Fatalf("UDP at %.0f of %.0f: findings %+v", arrived, offered, r.Findings)
	}
	return r.Findings[0]
}

// TestRankExplainsTheGap: a cause ranks by how much of the measured
// shortfall its own evidence can account for; one that cannot explain it
// is reported as present, never first, and never the verdict.
func TestRankExplainsTheGap(t *testing.T) {
	const a, b = "netns:wgl-x-a", "netns:wgl-x-b"
	collapse := finding.Finding{ID: catalog.WGSpecificCollapse, Severity: finding.Warning, Host: targettest.Spec(a), Title: "the tunnel collapses where UDP outside it does not"}
	bloat := finding.Finding{ID: catalog.LatencyBufferbloat, Severity: finding.Warning, Host: targettest.Spec(a), Title: "an upload adds 50 ms; the queue is on the path"}
	tooLarge := finding.Finding{ID: catalog.MTUTunnelTooLarge, Severity: finding.Warning, Host: targettest.Spec(a), Title: "WireGuard nested in WireGuard: MTU 1420 above 1360"}
	capped := finding.Finding{ID: catalog.ThroughputShaperCap, Severity: finding.Critical, Host: targettest.Spec(a), Title: "a tbf cap on wg0",
		Evidence: []finding.Evidence{finding.Evidence{Source: "tc qdisc", Key: "tbf rate on wg0", Value: "150 Mbit/s"}.Of(150, finding.Mbits)}}
	for _, tc := range []struct {
		name  string
		fs    []finding.Finding
		m     Measured
		first finding.ID // ranked first; "" for cause not found
		// cannot are the IDs present that cannot explain the gap, with the
		// most of it their evidence explains ("28%").
		cannot map[finding.ID]string
	}{
		{"a throttled WireGuard port: 11% steal cannot explain a tunnel at 19 of 92 Mbit/s",
			[]finding.Finding{steal(t, a, 11), collapse}, measured(a, b, 19, 92, 20, 92),
			catalog.WGSpecificCollapse, map[finding.ID]string{catalog.CPUSteal: "14%"}},
		{"a slow tunnel whose cause no check knows: 5% steal cannot explain 18% lost",
			[]finding.Finding{steal(t, a, 5)}, measured(a, b, 82, 100, 95, 100),
			"", map[finding.ID]string{catalog.CPUSteal: "28%"}},
		{"a third of the CPU time stolen explains a tunnel at 70%",
			[]finding.Finding{steal(t, a, 33)}, measured(a, b, 70, 100, 95, 100),
			catalog.CPUSteal, nil},
		{"kernel module in the guest: the queue CUBIC fills explains none of an upload the CPU held (0.71)",
			[]finding.Finding{bloat}, measured(a, b, 14.2, 20, 19, 20),
			"", map[finding.ID]string{catalog.LatencyBufferbloat: "none"}},
		{"WireGuard nested in WireGuard: the MTU before the queue",
			[]finding.Finding{bloat, tooLarge}, measured(a, b, 12, 20, 13, 20),
			catalog.MTUTunnelTooLarge, map[finding.ID]string{catalog.LatencyBufferbloat: "none"}},
		{"a policer at a quarter of the link explains a tunnel at a quarter",
			[]finding.Finding{policed(t, 190, 48), steal(t, a, 6)}, measured(a, b, 47, 190, 180, 190),
			catalog.PathUDPPoliced, map[finding.ID]string{catalog.CPUSteal: "8%"}},
		{"UDP that lost a tenth at the underlay's rate cannot explain a tunnel at a fifth",
			[]finding.Finding{policed(t, 190, 170)}, measured(a, b, 38, 190, 180, 190),
			"", map[finding.ID]string{catalog.PathUDPPoliced: "13%"}},
		{"a cap at a third of the path holds a tunnel at a third",
			[]finding.Finding{capped, steal(t, a, 7)}, measured(a, b, 142, 452, 440, 452),
			catalog.ThroughputShaperCap, map[finding.ID]string{catalog.CPUSteal: "10%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Client: targettest.Spec(a), Server: targettest.Spec(b), Measured: tc.m}
			r.judge(tc.fs)
			if r.Status != StatusSlow {
				t.Fatalf("status %s, want slow", r.Status)
			}
			v := r.Verdict()
			switch {
			case tc.first == "" && v != nil:
				t.Fatalf("verdict %s, want cause not found (%v)", v.Finding.ID, ids(r.Causes))
			case tc.first != "" && (v == nil || v.Finding.ID != tc.first):
				t.Fatalf("verdict %v, want %s (%v)", v, tc.first, ids(r.Causes))
			}
			for _, c := range r.Causes {
				want, cannot := tc.cannot[c.Finding.ID]
				if cannot != (c.CannotExplain != "") {
					t.Errorf("%s: cannot explain %q, want %v", c.Finding.ID, c.CannotExplain, cannot)
				}
				if cannot && !strings.Contains(c.CannotExplain, want) {
					t.Errorf("%s: %q, want it to say %s", c.Finding.ID, c.CannotExplain, want)
				}
			}
			var text strings.Builder
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(text.String(), "CAUSE NOT FOUND"); got != (tc.first == "") {
				t.Errorf("text says cause not found: %v, want %v:\n%s", got, tc.first == "", text.String())
			}
			for id, want := range tc.cannot {
				if !strings.Contains(text.String(), string(id)) || !strings.Contains(text.String(), "explains "+map[bool]string{true: "none", false: "at most " + want}[want == "none"]) {
					t.Errorf("text does not say %s explains %s:\n%s", id, want, text.String())
				}
			}
		})
	}
}
