package check

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Entry is everything wgperf knows about one finding ID: what it is called
// and why it matters, what reports it, the severities it carries, what drives
// doctor's ranking and plan, the remedies its findings may carry and an
// example of its fix. Catalog holds one per ID; checks, probes, doctor, the
// lab's scenarios, "wgperf explain", the docs pages and the JSON schema's ID
// list all read it, and its test holds every field to what the code does.
type Entry struct {
	ID    finding.ID
	Title string // one line: "wgperf checks" lists it, and it names the per-host check
	// What reports it: its per-host check, its cross-host check, the probes
	// and doctor's own analyses that report it (in their own words, each with
	// the package that makes its findings); at least one. TestProducers holds
	// that no other code makes a finding with its ID.
	Check  *Check
	Cross  *CrossCheck
	Probes []Source
	// Severities are those its findings may carry, lowest first.
	Severities []finding.Severity
	// Why says what it costs, in a few sentences.
	Why string
	// Cases are the real investigations it comes from (Case*), none for a
	// general health check.
	Cases []string
	// Doctor is what drives doctor's ranking, verdict and probe plan.
	Doctor Doctor
	// Remedies are the fix kinds its findings may carry, each with the values
	// its params may take (Allows): a findings file asking for anything else
	// asks for what wgperf would not propose.
	Remedies []Remedy
	// Example is its fix on a described host, built by the constructors the
	// checks use (for exampleHost): "wgperf fix" computes the real values.
	Example Example
}

// Example is a finding's fix on one described host.
type Example struct {
	Host  string // the situation the fixes are written for
	Fixes func() []finding.Fix
}

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
)

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

// Remedy is one fix kind an entry's findings may carry, with the values each
// of its params may take; a param it does not list is not allowed.
type Remedy struct {
	Kind   string
	Params map[string]Values
}

// Values are what one param of a remedy may be: a form any host allows, and
// with On a rule the host as it is now must meet (AllowsOn).
type Values struct {
	what     string // for messages: "one of a, b", "a whole number in [1, 2]"
	optional bool
	match    func(string) bool
	host     HostRule
}

// OneOf allows exactly these values.
func OneOf(values ...string) Values {
	return Values{what: "one of " + strings.Join(values, ", "), match: func(s string) bool { return slices.Contains(values, s) }}
}

// Between allows a whole number in [lo, hi].
func Between(lo, hi int64) Values {
	return Values{what: fmt.Sprintf("a whole number in [%d, %d]", lo, hi), match: func(s string) bool {
		n, err := strconv.ParseInt(s, 10, 64)
		return err == nil && strconv.FormatInt(n, 10) == s && n >= lo && n <= hi
	}}
}

// Triple allows "min default max" (tcp_rmem, tcp_wmem): three whole numbers,
// each at least the one before, the max a multiple of unit in [lo, hi].
func Triple(lo, hi, unit int64) Values {
	return Values{what: fmt.Sprintf(`"min default max" with max a multiple of %d in [%d, %d]`, unit, lo, hi), match: func(s string) bool {
		f := strings.Fields(s)
		if len(f) != 3 {
			return false
		}
		var n [3]int64
		for i, x := range f {
			v, err := strconv.ParseInt(x, 10, 64)
			if err != nil || v < 0 || (i > 0 && v < n[i-1]) {
				return false
			}
			n[i] = v
		}
		return n[2] >= lo && n[2] <= hi && n[2]%unit == 0
	}}
}

// BaseOrDouble allows base, or twice a whole number of at least from, up to
// hi: what a check that raises a limit to base, or doubles one of at least
// from, can propose.
func BaseOrDouble(base, from, hi int64) Values {
	return Values{what: fmt.Sprintf("%d, or an even number in [%d, %d]", base, 2*from, hi), match: func(s string) bool {
		n, err := strconv.ParseInt(s, 10, 64)
		return err == nil && strconv.FormatInt(n, 10) == s && (n == base || n%2 == 0 && n >= 2*from && n <= hi)
	}}
}

// Mbit allows a tc rate in whole Mbit/s ("150mbit") in [lo, hi].
func Mbit(lo, hi int64) Values {
	return Values{what: fmt.Sprintf(`a rate "Nmbit" with N in [%d, %d]`, lo, hi), match: func(s string) bool {
		n, ok := strings.CutSuffix(s, "mbit")
		v, err := strconv.ParseInt(n, 10, 64)
		return ok && err == nil && strconv.FormatInt(v, 10) == n && v >= lo && v <= hi
	}}
}

// Named allows any value the remedy kind's own validation accepts: names,
// addresses and rule texts of the host, which no catalog can list.
func Named(what string) Values {
	return Values{what: what, match: func(string) bool { return true }}
}

// Either allows what a or b allows.
func Either(a, b Values) Values {
	return Values{what: a.what + ", or " + b.what, match: func(s string) bool { return a.match(s) || b.match(s) }}
}

// On adds a rule the host as it is now must meet (AllowsOn).
func (v Values) On(rule HostRule) Values {
	v.host = rule
	return v
}

// Optional allows the param to be absent.
func (v Values) Optional() Values {
	v.optional = true
	return v
}

func (v Values) String() string { return v.what }

// Allows reports whether a finding of this entry may carry the action: a
// kind among its Remedies, every param listed and in range, every required
// param present. The error says what is not allowed, in one line.
func (e Entry) Allows(a finding.Action) error {
	i := slices.IndexFunc(e.Remedies, func(r Remedy) bool { return r.Kind == a.Kind })
	if i < 0 {
		var kinds []string
		for _, r := range e.Remedies {
			kinds = append(kinds, r.Kind)
		}
		if len(kinds) == 0 {
			return fmt.Errorf("%s has no automatic fix, not %q", e.ID, a.Kind)
		}
		return fmt.Errorf("%s is fixed by %s, not %q", e.ID, strings.Join(kinds, ", "), a.Kind)
	}
	r := e.Remedies[i]
	for _, k := range sortedKeys(a.Params) {
		v, ok := r.Params[k]
		if !ok {
			return fmt.Errorf("%s: %s takes no param %q", e.ID, a.Kind, k)
		}
		if !v.match(a.Params[k]) {
			return fmt.Errorf("%s: %s %s=%q: want %s", e.ID, a.Kind, k, a.Params[k], v)
		}
	}
	for _, k := range sortedKeys(r.Params) {
		if _, ok := a.Params[k]; !ok && !r.Params[k].optional {
			return fmt.Errorf("%s: %s needs param %q", e.ID, a.Kind, k)
		}
	}
	// Checks write an action as its remedy does (rem.Params()): one in
	// another form (a param the kind ignores, a number with a sign) is not
	// one of theirs.
	rem, err := remedy.Parse(a)
	if err != nil {
		return fmt.Errorf("%s: %v", e.ID, err)
	}
	if want := rem.Params(); !maps.Equal(want, a.Params) {
		return fmt.Errorf("%s: %s %s: wgperf writes this fix as %s", e.ID, a.Kind, paramText(a.Params), paramText(want))
	}
	return nil
}

// paramText is params as "k=v k=v", sorted, values quoted.
func paramText(p map[string]string) string {
	var b strings.Builder
	for i, k := range sortedKeys(p) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", k, p[k])
	}
	return b.String()
}
