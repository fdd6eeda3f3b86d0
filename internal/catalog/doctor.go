package catalog

import "github.com/wgperf/wgperf/internal/finding"

// Role is what a finding is to doctor.
type Role int

const (
	_ Role = iota
	// Cause is a cause of slowness, ranked by the throughput it explains.
	Cause
	// Symptom is the slowness itself as measured (the tunnel's ratio to its
	// underlay, asymmetry, oscillation): the verdict names a cause instead.
	Symptom
	// Environment is a cause that may be the machine's rather than the
	// network's (a saturated CPU): doctor ranks it, and the lab, whose nodes
	// share this machine's CPUs, reports it without judging it.
	Environment
)

// Side is the direction of traffic a host's finding hurts.
type Side int

const (
	_ Side = iota
	Both
	Receiver // the direction in which its host receives (buffers, backlog, softirq)
	Sender   // the direction in which its host sends (congestion control)
)

// Visibility says whether the bench's tunnel/underlay ratio shows what a
// cause costs.
type Visibility int

const (
	_ Visibility = iota
	InBench
	// NotInBench: a stale endpoint route slows the underlay run to the same
	// endpoint too, a missing MSS clamp stalls the hosts behind the gateways
	// (not the gateways' own bench), an ICMP limit costs only through the
	// failovers it triggers.
	NotInBench
)

// Verify says how "fix --verify" and doctor --fix keep a remedy.
type Verify int

const (
	_ Verify = iota
	// Measured: kept only if a throughput measurement improved.
	Measured
	// ConfirmOnly: a throughput measurement cannot see its gain (it would
	// roll the fix back), so the confirm window alone keeps it.
	ConfirmOnly
	// Spread: kept only if parallel flows around the tunnel carried more
	// after it. The change spreads flows (a bond's hash); the tunnel is one
	// flow, which rides one link either way, so its own rate cannot show it.
	Spread
)

// Doctor is what drives doctor for one finding ID.
type Doctor struct {
	Role Role
	// Impact is the largest share of the throughput a Cause can cost when
	// present (0..1]: a black hole or a route over the backup takes (nearly)
	// all of it, a buffer that drops datagrams a good part. Root causes rank
	// above the consequences they drive (CUBIC losing to drops). A note
	// (info) costs at most 0.05, whatever its entry says.
	Impact float64
	Side   Side
	Bench  Visibility
	// Gain says what fixing a cause NotInBench brings back, since no figure can.
	Gain   string
	Verify Verify
	// Calls is the targeted probe its report calls for on a slow tunnel ("" for none).
	Calls Probe
	// Load names it where it makes throughput depend on load, in the reason
	// doctor gives for its long run ("UDP buffer drops"): a short bench's
	// rate may hide what a longer or parallel one shows. "" for none.
	Load string
	// Underlies are the findings this cause brings about, whose fixes work
	// around it (a rule dropping ICMP frag-needed makes the black hole that a
	// lower MTU or an MSS clamp works around): where both are reported, doctor
	// ranks it first, with the share it explains, so the cure comes before
	// the workaround.
	Underlies []finding.ID
	// CostsLatency: the cause costs round trip, not rate (a queue a transfer
	// fills). While the tunnel is slow it ranks below every cause of that
	// slowness; while the rate is fine it is the answer.
	CostsLatency bool
	// RefusesNewFlows: at critical severity the kernel drops the packets of
	// every new flow, the bench's and the probes' included (a full conntrack
	// table), so it explains all of what they saw.
	RefusesNewFlows bool
	// Bound is how the finding's own evidence bounds the share of the
	// throughput it can cost, where that evidence has the number (steal's
	// share of the CPU time, a policer's or a cap's rate): doctor ranks it
	// by the share of the measured shortfall it can account for, and one
	// that cannot account for most of it is reported as present, never
	// first. The zero value: its Impact alone.
	Bound Bound
	// BothEnds: the fix has two halves on the two ends, the far end's (the
	// first of Remedies) and the near end's (the second), and either alone
	// cuts the tunnel (a new listen port, and the peer's endpoint moved to
	// it). doctor --fix applies them as one step group, the far end first,
	// and rolls both back when the near end's is not kept.
	BothEnds bool
}

// Bound names the evidence that bounds what a cause can cost (Doctor.Bound).
type Bound struct {
	// Key is in the key of the evidence whose Number bounds it (the first
	// such evidence in the finding's Unit counts).
	Key string
	As  BoundKind
}

// BoundKind says how an evidence's number bounds a cause's cost.
type BoundKind int

const (
	_ BoundKind = iota
	// ShareTaken: the number is the percentage of a resource the cause takes
	// away (steal's share of all CPU time): against an end the resource
	// bounds, the rate falls by at most that share.
	ShareTaken
	// RateHeld: the number is the rate in Mbit/s the cause lets through (a
	// policer's, a cap's): it costs at most what the underlay carried above it.
	RateHeld
)

// Unit is the unit the bounding evidence's number is in.
func (k BoundKind) Unit() finding.Unit {
	switch k {
	case ShareTaken:
		return finding.Percent
	case RateHeld:
		return finding.Mbits
	}
	return ""
}
