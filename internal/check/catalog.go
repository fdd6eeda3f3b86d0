package check

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Finding IDs, one per catalog entry. IDs are stable: JSON consumers,
// alerts, docs and "wgperf fix --only" rely on them.
const (
	BondHashPolicy         finding.ID = "bond.hash-policy"
	ConntrackInvalidDrops  finding.ID = "conntrack.invalid-drops"
	ConntrackTablePressure finding.ID = "conntrack.table-pressure"
	ConntrackTunnelTracked finding.ID = "conntrack.tunnel-tracked"
	CPUIRQImbalance        finding.ID = "cpu.irq-imbalance"
	CPUQuotaThrottled      finding.ID = "cpu.quota-throttled"
	CPUSaturated           finding.ID = "cpu.saturated"
	CPUSoftirqImbalance    finding.ID = "cpu.softirq-imbalance"
	CPUSteal               finding.ID = "cpu.steal"
	ICMPFragNeededDropped  finding.ID = "icmp.frag-needed-dropped"
	ICMPRatelimitDrops     finding.ID = "icmp.ratelimit-drops"
	KernelDrops            finding.ID = "kernel.drops"
	LatencyBufferbloat     finding.ID = "latency.bufferbloat"
	MTUMSSClampIPv6        finding.ID = "mtu.mss-clamp-ipv6"
	MTUMSSClampMissing     finding.ID = "mtu.mss-clamp-missing"
	MTUPMTUDBlackhole      finding.ID = "mtu.pmtud-blackhole"
	MTUTunnelTooLarge      finding.ID = "mtu.tunnel-too-large"
	MTUTunnelTooSmall      finding.ID = "mtu.tunnel-too-small"
	NetBacklogDrops        finding.ID = "net.backlog-drops"
	NetLinkSpeed           finding.ID = "net.link-speed"
	NetSoftirqBudget       finding.ID = "net.softirq-budget"
	NetUDPOffloads         finding.ID = "net.udp-offloads"
	PathHubLeg             finding.ID = "path.hub-leg"
	PathPortThrottled      finding.ID = "path.port-throttled"
	PathUDPPoliced         finding.ID = "path.udp-policed"
	RouteECMPSuggested     finding.ID = "route.ecmp-suggested"
	RouteEndpointUplink    finding.ID = "route.endpoint-uplink"
	RouteStaleEndpoint     finding.ID = "route.stale-endpoint"
	RouteUplinkFlaps       finding.ID = "route.uplink-flaps"
	TCPBuffersSmall        finding.ID = "tcp.buffers-small"
	TCPCongestionControl   finding.ID = "tcp.congestion-control"
	ThroughputAsymmetric   finding.ID = "throughput.asymmetric"
	ThroughputCollapseKnee finding.ID = "throughput.collapse-knee"
	ThroughputOscillation  finding.ID = "throughput.oscillation"
	ThroughputShaperCap    finding.ID = "throughput.shaper-cap"
	ThroughputTunnelRatio  finding.ID = "throughput.tunnel-ratio"
	UDPRcvbufErrors        finding.ID = "udp.rcvbuf-errors"
	WGAllowedIPsMismatch   finding.ID = "wg.allowedips-mismatch"
	WGSpecificCollapse     finding.ID = "wg.specific-collapse"
	WGHandshakeStale       finding.ID = "wg.handshake-stale"
	WGNATNoKeepalive       finding.ID = "wg.nat-no-keepalive"
	WGSharedKey            finding.ID = "wg.shared-key"
	WGUserspace            finding.ID = "wg.userspace"
)

// The real investigations the catalog comes from, named by what happened (the
// README's case list uses the same words; the lab's scenarios reproduce them).
const (
	CaseMultiWAN    = "multi-WAN router: endpoint route stuck on the backup uplink"
	CasePMTUD       = "PMTUD black hole between two sites with ICMP blocked"
	CaseTuning      = "tunnel below 90% of its link (tuning guide)"
	CaseECMP        = "more than one link's worth: ECMP over several tunnels and a bond"
	CaseRemoteUsers = "remote users at 5 Mbit/s over a 400 Mbit/s path"
)

// Cases lists the case names, in the README's order.
var Cases = []string{CaseMultiWAN, CasePMTUD, CaseTuning, CaseECMP, CaseRemoteUsers}

// costsThroughFailures is the gain of a cause no steady-rate figure shows.
const costsThroughFailures = "not visible in the bench: it costs through failovers or failed connections, not the steady rate"

// Values of remedy params the catalog names more than once.
var (
	wgInterface     = Named("the WireGuard interface").On(onWireGuard)
	uciSectionParam = Named("its OpenWrt network section").On(tunnelUCISection).Optional()
	wgMTU           = Remedy{Kind: remedy.KindWGMTU, Params: map[string]Values{"interface": wgInterface, "mtu": Between(1280, 9000).On(lowersMTU), "uci_section": uciSectionParam}}
	notrack         = Remedy{Kind: remedy.KindNoTrack, Params: map[string]Values{
		"interface": Named("the WireGuard interface, which no NAT rule matches").On(untrackable), "port": Between(1, 65535).On(listenPort)}}
)

// maxInt is the largest value the kernel takes for an int sysctl.
const maxInt = 1<<31 - 1

// exampleHost is the host the example fixes are written for: a Linux host
// (not OpenWrt), whose remedies are the plain ones.
var exampleHost = &facts.Snapshot{}

const (
	exampleEndpoint = "203.0.113.2"
	exampleGateway  = "192.0.2.1"
)

var exampleWG = facts.WGInterface{Name: "wg0", ListenPort: 51820}

// exampleFarKey is the far end's public key in the examples.
const exampleFarKey = "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA="

// Catalog is every finding ID wgperf reports, sorted by ID. A new finding is
// its check (or the probe that reports it) and its entry here.
var Catalog = byID(slices.Concat(linkEntries, conntrackEntries, cpuEntries, mtuEntries, pathEntries, throughputEntries, wgEntries))

// byID sorts the entries by ID, as Catalog lists them.
func byID(es []Entry) []Entry {
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return es
}
