package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// windowHeld is tcp.buffers-small as the bench measures it with ss: the
// receiver's window lets one stream reach mbit.
func windowHeld(host string, mbit float64) finding.Finding {
	return finding.Finding{ID: catalog.TCPBuffersSmall, Severity: finding.Warning, Host: targettest.Spec(host),
		Title: "TCP receive window 157K held the tunnel upload 37% of the time: below the path's BDP, capped by net.ipv4.tcp_rmem max 256K",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "ss -tin", Key: "rate the receive window allows (window / round trip)", Value: "61.4 Mbit/s"}.Of(mbit, finding.Mbits),
			finding.Evidence{Source: "sysctl", Key: "net.ipv4.tcp_rmem", Value: "4096 131072 262144"}.Of(262144, finding.Bytes),
		}}
}

// TestRankMeasuredWindow: the bench's window finding is held to the rate
// its window allows: it explains a tunnel near that rate and ranks first,
// and cannot explain one far below it.
func TestRankMeasuredWindow(t *testing.T) {
	const a, b = "netns:wgl-x-a", "netns:wgl-x-b"
	for _, tc := range []struct {
		name   string
		fs     []finding.Finding
		m      Measured
		first  finding.ID
		cannot string
	}{
		{"a window that allows 61 Mbit/s explains an upload at 54 of 95, before 6% steal",
			[]finding.Finding{windowHeld(b, 61.4), steal(t, a, 6)}, measured(a, b, 54, 95, 92, 95), catalog.TCPBuffersSmall, ""},
		{"a window that allows 90 Mbit/s cannot explain an upload at 40 of 100",
			[]finding.Finding{windowHeld(b, 90)}, measured(a, b, 40, 100, 95, 100), "", "at most 17%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Client: targettest.Spec(a), Server: targettest.Spec(b), Measured: tc.m}
			r.judge(tc.fs)
			v := r.Verdict()
			switch {
			case tc.first == "" && v != nil:
				t.Fatalf("verdict %s, want cause not found (%v)", v.Finding.ID, ids(r.Causes))
			case tc.first != "" && (v == nil || v.Finding.ID != tc.first):
				t.Fatalf("verdict %v, want %s (%v)", v, tc.first, ids(r.Causes))
			}
			for _, c := range r.Causes {
				if c.Finding.ID != catalog.TCPBuffersSmall {
					continue
				}
				if (tc.cannot != "") != (c.CannotExplain != "") || !strings.Contains(c.CannotExplain, tc.cannot) {
					t.Errorf("cannot explain %q, want %q", c.CannotExplain, tc.cannot)
				}
			}
		})
	}
}
