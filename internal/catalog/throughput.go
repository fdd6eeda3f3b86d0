package catalog

import "github.com/wgperf/wgperf/internal/finding"

// The IDs of this area's findings.
const (
	LatencyBufferbloat     ID = "latency.bufferbloat"
	TCPBuffersSmall        ID = "tcp.buffers-small"
	TCPCongestionControl   ID = "tcp.congestion-control"
	ThroughputAsymmetric   ID = "throughput.asymmetric"
	ThroughputCollapseKnee ID = "throughput.collapse-knee"
	ThroughputOscillation  ID = "throughput.oscillation"
	ThroughputShaperCap    ID = "throughput.shaper-cap"
	ThroughputTunnelRatio  ID = "throughput.tunnel-ratio"
)

// throughputEntries are the catalog's entries of one area (Entries, catalog.go):
// What the bench measures: the ratio, asymmetry, collapses, caps, queues and TCP's own limits.
var throughputEntries = []Entry{
	{
		ID:         LatencyBufferbloat,
		Title:      "Latency under load: a transfer fills a deep queue and every packet waits behind it",
		Severities: []finding.Severity{finding.Warning},
		Why: `The throughput looks fine, but while a transfer runs every interactive
packet (a keystroke over ssh, a call, a DNS lookup) waits behind the queue the
transfer keeps full: hundreds of milliseconds on a home uplink's FIFO. It is
the commonest "the VPN is slow" that a speed test cannot see. A queue
discipline that shapes just below the bottleneck keeps that queue where an
AQM holds it to a few milliseconds (flent's RRUL test and OpenWrt's SQM exist
for it).`,
		Cases: []string{CaseTuning},
		// Impact: it costs no rate, so below every other hidden cause (0.3 and
		// up: a health check's lost pings fail a router over) and above any
		// latent one (a fifth of its impact), where the rate is fine.
		Doctor: Doctor{Role: Cause, Impact: 0.25, Side: Sender, Bench: NotInBench, Verify: ConfirmOnly, CostsLatency: true,
			Gain: "interactive traffic keeps about its idle round trip while a transfer runs (the rate drops by the shaper's 10%)"},
	},
	{
		ID:         TCPBuffersSmall,
		Title:      "TCP buffer maximum below the path's bandwidth-delay product",
		Severities: []finding.Severity{finding.Warning},
		Why: `TCP cannot have more data in flight than its buffer, so one connection tops
out at buffer / round-trip time: 4 MiB over 50 ms is about 670 Mbit/s, however
fast the tunnel is.`,
		Cases: []string{CaseTuning},
		// The bench's finding says the rate its measured window allows.
		Doctor: Doctor{Role: Cause, Impact: 0.4, Side: Both, Bench: InBench, Verify: Measured,
			Bound: Bound{Key: "allows (", As: RateHeld}},
	},
	{
		ID:         TCPCongestionControl,
		Title:      "Loss-based congestion control (CUBIC/Reno) on a host that sees loss",
		Severities: []finding.Severity{finding.Warning},
		Why: `CUBIC and Reno halve their window at every loss and grow it back slowly.
Through a tunnel with a little loss the window never gets large, so a long path
carries a fraction of what it could.`,
		Cases:  []string{CaseTuning, CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.4, Side: Sender, Bench: InBench, Verify: Measured},
	},
	{
		ID:         ThroughputAsymmetric,
		Title:      "One direction of a tunnel loses what the other delivers",
		Severities: []finding.Severity{finding.Warning},
		Why: `Loss in one direction only points at that direction's path or receiver: a
hop whose ICMP is blocked, a receiver dropping UDP. The slow direction is often
the one users notice (uploads, backups).`,
		Cases:  []string{CaseMultiWAN, CasePMTUD, CaseRemoteUsers},
		Doctor: Doctor{Role: Symptom},
	},
	{
		ID:         ThroughputCollapseKnee,
		Title:      "Pushed past a knee the tunnel collapses in cycles; capped below it, it holds steady",
		Severities: []finding.Severity{finding.Warning},
		Why: `Something behind the tunnel (a receiver's CPU, a queue) collapses when it is
pushed past a rate and recovers a few seconds later, so the sender climbs past
it again and again. The collapses stall what users run (video, backups); a
rate just below the knee is steady, often faster on average too, and when it
is a little slower on average it still never stalls.`,
		Cases: []string{CaseRemoteUsers},
		// A knee the sweep proved is what made the tunnel collapse where UDP
		// outside it did not (the receiver's CPU meets only the tunnel's
		// packets): it names the mechanism that finding leaves open.
		Doctor: Doctor{Role: Cause, Impact: 0.4, Side: Sender, Bench: NotInBench, Verify: ConfirmOnly,
			Gain: "a steady rate just below the knee instead of collapses every few seconds " +
				"(a long run shows it; a short bench may land on either phase)",
			Underlies: []finding.ID{WGSpecificCollapse}},
	},
	{
		ID:         ThroughputOscillation,
		Title:      "Throughput collapses and recovers in cycles",
		Severities: []finding.Severity{finding.Warning},
		Why: `A sawtooth of collapse and recovery averages well below the link, and users
see stalls every few seconds. Whether a cap below the knee steadies it, and at
what cost to the mean, only a sweep shows.`,
		Cases:  []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Symptom, Calls: ProbeShaping, Load: "an oscillating rate"},
	},
	{
		ID:         ThroughputShaperCap,
		Title:      "A shaper on the tunnel's interface is its ceiling: the path carries more than the cap lets through",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `A cap is set against a problem (collapse cycles, a receiver that drops under
bursts) and stays when the problem is fixed: then it is the tunnel's ceiling,
and no other tuning makes the tunnel faster. Critical when it holds the tunnel
below half of what the path carries.`,
		Cases: []string{CaseRemoteUsers},
		Doctor: Doctor{Role: Cause, Impact: 0.9, Side: Sender, Bench: InBench, Verify: Measured,
			Bound: Bound{Key: " rate on ", As: RateHeld}},
	},
	{
		ID:         ThroughputTunnelRatio,
		Title:      "The tunnel carries less than 90% of the link under it",
		Severities: []finding.Severity{finding.Warning, finding.Critical},
		Why: `It is the symptom people notice: the tunnel is slower than the link under it.
It names no cause by itself; the other findings on the same hosts, ranked by
wgperf doctor, say which one costs the throughput.`,
		Cases:  []string{CaseTuning},
		Doctor: Doctor{Role: Symptom},
	},
}
