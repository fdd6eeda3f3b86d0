package check

import (
	"slices"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
)

// Raises are the findings this package builds: the per-host and cross-host checks, and the helpers doctor calls after its bench (CPUStealFinding, CPUQuotaFinding, ShaperCapFinding). Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{
	catalog.BondHashPolicy,
	catalog.ConntrackInvalidDrops,
	catalog.ConntrackTablePressure,
	catalog.ConntrackTunnelTracked,
	catalog.CPUIRQImbalance,
	catalog.CPUQuotaThrottled,
	catalog.CPUSoftirqImbalance,
	catalog.CPUSteal,
	catalog.ICMPFragNeededDropped,
	catalog.ICMPRatelimitDrops,
	catalog.MTUMSSClampIPv6,
	catalog.MTUMSSClampMissing,
	catalog.MTUTunnelTooLarge,
	catalog.MTUTunnelTooSmall,
	catalog.NetBacklogDrops,
	catalog.NetLinkSpeed,
	catalog.NetSoftirqBudget,
	catalog.NetUDPOffloads,
	catalog.RouteStaleEndpoint,
	catalog.RouteUplinkFlaps,
	catalog.TCPBuffersSmall,
	catalog.TCPCongestionControl,
	catalog.ThroughputAsymmetric,
	catalog.ThroughputShaperCap,
	catalog.UDPRcvbufErrors,
	catalog.WGAllowedIPsMismatch,
	catalog.WGHandshakeStale,
	catalog.WGNATNoKeepalive,
	catalog.WGUserspace,
}

// Checks is every per-host check, sorted by ID: those the catalog names.
var Checks = func() []Check {
	var out []Check
	for _, e := range Catalog {
		if e.Check != nil {
			c := *e.Check
			c.ID = e.ID
			out = append(out, c)
		}
	}
	return out
}()

// CrossChecks compare several hosts (both ends of a tunnel), sorted by ID:
// those the catalog names.
var CrossChecks = func() []CrossCheck {
	var out []CrossCheck
	for _, e := range Catalog {
		if e.Cross != nil {
			c := *e.Cross
			c.ID = e.ID
			out = append(out, c)
		}
	}
	return out
}()

// Lookup returns the catalog entry of id.
func Lookup(id finding.ID) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(Catalog, id, func(e Entry, id finding.ID) int {
		switch {
		case e.ID < id:
			return -1
		case e.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return Entry{}, false
	}
	return Catalog[i], true
}

// Allows reports whether a finding of id may carry the action (Entry.Allows);
// an ID outside the catalog allows none.
func Allows(id finding.ID, a finding.Action) error {
	e, ok := Lookup(id)
	if !ok {
		return &UnknownIDError{ID: id}
	}
	return e.Allows(a)
}

// UnknownIDError is an ID that is not in the catalog.
type UnknownIDError struct{ ID finding.ID }

func (e *UnknownIDError) Error() string { return "finding " + string(e.ID) + " is not in the catalog" }
