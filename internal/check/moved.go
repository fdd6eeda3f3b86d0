package check

// Aliases of the names that moved to package catalog, until their users import it.

import "github.com/wgperf/wgperf/internal/catalog"

const (
	CaseMultiWAN = catalog.CaseMultiWAN
	CasePMTUD = catalog.CasePMTUD
	CaseTuning = catalog.CaseTuning
	CaseECMP = catalog.CaseECMP
	CaseRemoteUsers = catalog.CaseRemoteUsers
	ConntrackInvalidDrops = catalog.ConntrackInvalidDrops
	ConntrackTablePressure = catalog.ConntrackTablePressure
	ConntrackTunnelTracked = catalog.ConntrackTunnelTracked
	KernelDrops = catalog.KernelDrops
	CPUIRQImbalance = catalog.CPUIRQImbalance
	CPUQuotaThrottled = catalog.CPUQuotaThrottled
	CPUSaturated = catalog.CPUSaturated
	CPUSoftirqImbalance = catalog.CPUSoftirqImbalance
	CPUSteal = catalog.CPUSteal
	Cause = catalog.Cause
	Symptom = catalog.Symptom
	Environment = catalog.Environment
	Both = catalog.Both
	Receiver = catalog.Receiver
	Sender = catalog.Sender
	InBench = catalog.InBench
	NotInBench = catalog.NotInBench
	Measured = catalog.Measured
	ConfirmOnly = catalog.ConfirmOnly
	ShareTaken = catalog.ShareTaken
	RateHeld = catalog.RateHeld
	BondHashPolicy = catalog.BondHashPolicy
	NetBacklogDrops = catalog.NetBacklogDrops
	NetLinkSpeed = catalog.NetLinkSpeed
	NetSoftirqBudget = catalog.NetSoftirqBudget
	NetUDPOffloads = catalog.NetUDPOffloads
	UDPRcvbufErrors = catalog.UDPRcvbufErrors
	ICMPFragNeededDropped = catalog.ICMPFragNeededDropped
	ICMPRatelimitDrops = catalog.ICMPRatelimitDrops
	MTUMSSClampIPv6 = catalog.MTUMSSClampIPv6
	MTUMSSClampMissing = catalog.MTUMSSClampMissing
	MTUPMTUDBlackhole = catalog.MTUPMTUDBlackhole
	MTUTunnelTooLarge = catalog.MTUTunnelTooLarge
	MTUTunnelTooSmall = catalog.MTUTunnelTooSmall
	PathHubLeg = catalog.PathHubLeg
	PathPortThrottled = catalog.PathPortThrottled
	PathUDPPoliced = catalog.PathUDPPoliced
	RouteECMPSuggested = catalog.RouteECMPSuggested
	RouteEndpointUplink = catalog.RouteEndpointUplink
	RouteStaleEndpoint = catalog.RouteStaleEndpoint
	RouteUplinkFlaps = catalog.RouteUplinkFlaps
	ProbeMTU = catalog.ProbeMTU
	ProbeICMPBurst = catalog.ProbeICMPBurst
	ProbeShaping = catalog.ProbeShaping
	ProbeUDPOutside = catalog.ProbeUDPOutside
	ProbeLongRun = catalog.ProbeLongRun
	LatencyBufferbloat = catalog.LatencyBufferbloat
	TCPBuffersSmall = catalog.TCPBuffersSmall
	TCPCongestionControl = catalog.TCPCongestionControl
	ThroughputAsymmetric = catalog.ThroughputAsymmetric
	ThroughputCollapseKnee = catalog.ThroughputCollapseKnee
	ThroughputOscillation = catalog.ThroughputOscillation
	ThroughputShaperCap = catalog.ThroughputShaperCap
	ThroughputTunnelRatio = catalog.ThroughputTunnelRatio
	WGAllowedIPsMismatch = catalog.WGAllowedIPsMismatch
	WGHandshakeStale = catalog.WGHandshakeStale
	WGNATNoKeepalive = catalog.WGNATNoKeepalive
	WGSharedKey = catalog.WGSharedKey
	WGSpecificCollapse = catalog.WGSpecificCollapse
	WGUserspace = catalog.WGUserspace
)

type (
	Role = catalog.Role
	Side = catalog.Side
	Visibility = catalog.Visibility
	Verify = catalog.Verify
	Doctor = catalog.Doctor
	Bound = catalog.Bound
	BoundKind = catalog.BoundKind
	Probe = catalog.Probe
)

var Cases = catalog.Cases
