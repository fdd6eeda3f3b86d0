package bench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// An underlay run that cannot reach the far end's iperf3 (only WireGuard's
// port is let in) blocks the baseline; the tunnel's runs, and any other
// failure, are not a blocked baseline.
func TestUnderlayBlocked(t *testing.T) {
	refused := fmt.Errorf("bench: %w", &iperf.UnreachableError{Where: "203.0.113.2:5299", Why: "unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Connection refused"})
	underlay, tunnel := Spec{Path: PathUnderlay, Direction: Upload, Streams: 1}, Spec{Path: PathTunnel, Direction: Upload, Streams: 1}
	for _, tc := range []struct {
		name string
		spec Spec
		err  error
		want string
	}{
		{"underlay refused", underlay, refused, "iperf3 to 203.0.113.2:5299: unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Connection refused"},
		{"tunnel refused", tunnel, refused, ""},
		{"underlay stalled", underlay, fmt.Errorf("x: %w", iperf.ErrStalled), ""},
		{"underlay other error", underlay, errors.New("iperf3 is not installed"), ""},
		{"underlay ran", underlay, nil, ""},
	} {
		if got := underlayBlocked(tc.spec, tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
