package finding

// Catalog IDs: every ID a check or probe reports is one of these constants,
// written once. IDs are stable; tests, JSON consumers and docs rely on them.
const (
	BondHashPolicy         = "bond.hash-policy"
	ConntrackTablePressure = "conntrack.table-pressure"
	ConntrackTunnelTracked = "conntrack.tunnel-tracked"
	CPUSaturated           = "cpu.saturated"
	CPUSoftirqImbalance    = "cpu.softirq-imbalance"
	ICMPRatelimitDrops     = "icmp.ratelimit-drops"
	MTUMSSClampMissing     = "mtu.mss-clamp-missing"
	MTUPMTUDBlackhole      = "mtu.pmtud-blackhole"
	MTUTunnelTooLarge      = "mtu.tunnel-too-large"
	NetBacklogDrops        = "net.backlog-drops"
	RouteStaleEndpoint     = "route.stale-endpoint"
	TCPBuffersSmall        = "tcp.buffers-small"
	TCPCongestionControl   = "tcp.congestion-control"
	ThroughputAsymmetric   = "throughput.asymmetric"
	ThroughputOscillation  = "throughput.oscillation"
	ThroughputTunnelRatio  = "throughput.tunnel-ratio"
	UDPRcvbufErrors        = "udp.rcvbuf-errors"
	WGHandshakeStale       = "wg.handshake-stale"
	WGUserspace            = "wg.userspace"
)
