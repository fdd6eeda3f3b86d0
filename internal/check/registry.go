package check

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

// Catalog is the finding catalog of DESIGN.md: every ID a check, probe or the
// bench helper may report. IDs are stable; JSON consumers rely on them.
var Catalog = []string{
	"bond.hash-policy",
	"conntrack.table-pressure",
	"conntrack.tunnel-tracked",
	"cpu.saturated",
	"cpu.softirq-imbalance",
	"icmp.ratelimit-drops",
	"mtu.mss-clamp-missing",
	"mtu.pmtud-blackhole",
	"mtu.tunnel-too-large",
	"net.backlog-drops",
	"route.stale-endpoint",
	"tcp.buffers-small",
	"tcp.congestion-control",
	"throughput.asymmetric",
	"throughput.oscillation",
	"throughput.tunnel-ratio",
	"udp.rcvbuf-errors",
	"wg.handshake-stale",
	"wg.userspace",
}

// InCatalog reports whether id is a catalog ID.
func InCatalog(id string) bool {
	for _, c := range Catalog {
		if c == id {
			return true
		}
	}
	return false
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
