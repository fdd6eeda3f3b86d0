package check

import (
	"errors"

	"github.com/wgperf/wgperf/internal/facts"
)

// latency.bufferbloat is a probe finding (the bench's pings under load,
// internal/probe/bench/latencyfindings.go); this file holds the host rule
// of its fix.

// sqmDevice: where a queue discipline against bufferbloat goes, the
// sender's uplink (a queue on the path) or its WireGuard interface (a queue
// at the tunnel's end).
func sqmDevice(h *facts.Snapshot, p map[string]string, v string) error {
	if anUplink(h, p, v) == nil || onWireGuard(h, p, v) == nil {
		return nil
	}
	return errors.New("is neither an uplink nor a WireGuard interface")
}
