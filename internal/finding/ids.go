package finding

// Catalog IDs that more than one package reports (a probe, and maybe a check
// too), written once. An ID only one check reports is a constant in that
// check's file; check.Catalog lists them all. IDs are stable: tests, JSON
// consumers and docs rely on them.
const (
	CPUSaturated          = "cpu.saturated"
	ICMPRatelimitDrops    = "icmp.ratelimit-drops"
	MTUPMTUDBlackhole     = "mtu.pmtud-blackhole"
	MTUTunnelTooLarge     = "mtu.tunnel-too-large"
	TCPCongestionControl  = "tcp.congestion-control"
	ThroughputAsymmetric  = "throughput.asymmetric"
	ThroughputOscillation = "throughput.oscillation"
	ThroughputTunnelRatio = "throughput.tunnel-ratio"
	UDPRcvbufErrors       = "udp.rcvbuf-errors"
)
