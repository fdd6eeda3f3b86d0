package bench

import (
	"errors"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// underlayBlocked is the one line that says an underlay run could not reach
// the far end's iperf3 ("iperf3 to 203.0.113.2:5299: Connection refused"),
// or "" for any other outcome: where only WireGuard's port reaches the far
// end, the baseline is blocked and the tunnel can still be measured.
func underlayBlocked(spec Spec, err error) string {
	var ue *iperf.UnreachableError
	if spec.Path != PathUnderlay || !errors.As(err, &ue) {
		return ""
	}
	return "iperf3 to " + ue.Where + ": " + ue.Why
}
