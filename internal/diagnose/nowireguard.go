package diagnose

import (
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
)

// NoWireGuardError says a host has no WireGuard interface, so a command that
// needs a tunnel (doctor, fix --verify) has none to judge there: one line,
// exit 3, as diagnose's UNKNOWN.
type NoWireGuardError struct {
	Host target.Spec
	// Why is the collection's own note about "wg show" (wg not installed,
	// its error), empty when wg answered with no interface.
	Why string
}

func (e *NoWireGuardError) Error() string {
	s := "no WireGuard interface on " + e.Host.String()
	if e.Why != "" {
		s += " (" + e.Why + ")"
	}
	return s + ": there is no tunnel to judge"
}

// RequireWireGuard returns a *NoWireGuardError for the first snapshot with
// no WireGuard interface, nil when every host has one.
func RequireWireGuard(snaps []*facts.Snapshot) error {
	for _, s := range snaps {
		if len(s.WireGuard) > 0 {
			continue
		}
		e := &NoWireGuardError{Host: s.Host}
		for _, n := range s.Notes {
			if n.Source == "wg show" {
				e.Why = n.Source + ": " + n.Message
				break
			}
		}
		return e
	}
	return nil
}
