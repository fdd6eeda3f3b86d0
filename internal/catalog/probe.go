package catalog

// Probe is a targeted probe doctor runs when the evidence calls for it.
type Probe string

// Targeted probes.
const (
	ProbeMTU       Probe = "mtu"         // DF search to the endpoint (+ MSS stepping through the tunnel with a server)
	ProbeICMPBurst Probe = "icmp-burst"  // one-shot vs persistent pings to the health-check targets
	ProbeShaping   Probe = "shape-sweep" // tbf caps on the tunnel when throughput oscillates
	// ProbeUDPOutside offers UDP outside the tunnel at the rate TCP carried
	// there, in each slow direction: a path that polices UDP.
	ProbeUDPOutside Probe = "udp-outside"
	// ProbeLongRun is a 30-second per-second run and a parallel-stream run in
	// the slow or unsteady direction: collapse cycles and many flows.
	ProbeLongRun Probe = "long-run"
)
