package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// Where only WireGuard's port reaches the far end, the underlay's iperf3
// cannot connect: the tunnel's rate alone judges nothing, and doctor says
// why in one line and what to give instead. Before, a tunnel measured
// against a missing baseline was reported as "problems".
func TestBlockedBaselineIsUnjudged(t *testing.T) {
	const why = "iperf3 to 203.0.113.2:5299: Connection refused"
	m := Measured{Benched: true, Client: targettest.Spec("a"), Server: targettest.Spec("b"), Expected: bench.SingleHopRatio, UnderlayBlocked: why,
		Throughput: bench.Throughput{Up: bench.DirRate{Tunnel: 180}, Down: bench.DirRate{Tunnel: 176}}}
	if got := status(nil, m); got != StatusUnjudged {
		t.Errorf("status %q, want %q", got, StatusUnjudged)
	}
	line := blockedLine(why, &Config{})
	if !strings.HasPrefix(line, "underlay baseline blocked: "+why) || !strings.Contains(line, "--underlay-port") {
		t.Errorf("line %q", line)
	}
	if line := blockedLine(why, &Config{UnderlayPort: 443}); strings.Contains(line, "--underlay-port") {
		t.Errorf("a user who gave the port is told to give it: %q", line)
	}
	if th := blockedThreshold(why); !strings.Contains(th, why) || !strings.HasPrefix(th, "not applied") {
		t.Errorf("threshold %q", th)
	}
	// The tunnel's own rates are still shown, beside why they stand alone.
	var text bytes.Buffer
	r := &Report{Client: targettest.Spec("a"), Server: targettest.Spec("b"), Status: StatusUnjudged, Measured: m, NotJudged: []string{line}}
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "tunnel  180.0 Mbit/s, download 176.0: underlay baseline blocked ("+why+")") {
		t.Errorf("text:\n%s", text.String())
	}
}
