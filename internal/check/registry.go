package check

import (
	"slices"

	"github.com/wgperf/wgperf/internal/finding"
)

// Checks is every per-host check, sorted by ID. Adding a check means adding it
// here; the registry test holds it to the catalog and demands a table test.
var Checks = []Check{
	bondHashPolicy,
	conntrackTablePressure,
	conntrackTunnelTracked,
	softirqImbalance,
	icmpRateLimitDrops,
	mssClampMissing,
	tunnelTooLarge,
	backlogDrops,
	staleEndpoint,
	buffersSmall,
	congestionControl,
	udpRcvbufErrors,
	wgHandshakeStale,
	wgUserspace,
}

// CrossChecks compare several hosts (both ends of a tunnel), sorted by ID.
var CrossChecks = []CrossCheck{
	crossMTU,
	crossDelivery,
	crossHandshake,
}

// ProbeIDs are the IDs only active probes report (bench, mtu, shape-sweep);
// every other probe finding shares its ID with a check.
var ProbeIDs = []string{
	finding.CPUSaturated,
	finding.MTUPMTUDBlackhole,
	finding.ThroughputOscillation,
	finding.ThroughputTunnelRatio,
}

// Catalog is the finding catalog: every ID a check, cross-host check or probe
// may report, sorted, derived from the registry and ProbeIDs. IDs are stable;
// JSON consumers rely on them.
var Catalog = catalog()

func catalog() []string {
	ids := slices.Clone(ProbeIDs)
	for _, c := range Checks {
		ids = append(ids, c.ID)
	}
	for _, c := range CrossChecks {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// InCatalog reports whether id is a catalog ID.
func InCatalog(id string) bool {
	_, ok := slices.BinarySearch(Catalog, id)
	return ok
}

// Lookup returns the per-host check with the given ID.
func Lookup(id string) (Check, bool) {
	for _, c := range Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}
