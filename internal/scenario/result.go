package scenario

import (
	"encoding/json"
	"fmt"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
)

// Measurement is the before or after figures of a scenario, in Mbit/s:
// upload (A to B) and download, through the tunnel and around it. Its JSON
// keeps the flat fields lab run has always printed (the download's only when
// its underlay was measured).
type Measurement struct{ bench.Throughput }

// flatMeasurement is Measurement's JSON.
type flatMeasurement struct {
	Tunnel       float64 `json:"tunnel_mbit"`
	Underlay     float64 `json:"underlay_mbit"`
	TunnelDown   float64 `json:"tunnel_down_mbit,omitempty"`
	UnderlayDown float64 `json:"underlay_down_mbit,omitempty"`
}

func (m Measurement) MarshalJSON() ([]byte, error) {
	return json.Marshal(flatMeasurement{m.Up.Tunnel, m.Up.Underlay, m.Down.Tunnel, m.Down.Underlay})
}

func (m *Measurement) UnmarshalJSON(b []byte) error {
	var f flatMeasurement
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	m.Up = bench.DirRate{Tunnel: f.Tunnel, Underlay: f.Underlay}
	m.Down = bench.DirRate{Tunnel: f.TunnelDown, Underlay: f.UnderlayDown}
	return nil
}

func (m Measurement) String() string {
	s := fmt.Sprintf("tunnel %.1f Mbit/s up", m.Up.Tunnel)
	if m.Down.Underlay > 0 {
		s += fmt.Sprintf(", %.1f down", m.Down.Tunnel)
	}
	s += fmt.Sprintf("; underlay %.1f up", m.Up.Underlay)
	if m.Down.Underlay > 0 {
		s += fmt.Sprintf(", %.1f down", m.Down.Underlay)
	}
	return s
}

// Result is what happened in one scenario.
type Result struct {
	Scenario string `json:"scenario"`
	// WireGuard is the implementation the lab's tunnel ends ran.
	WireGuard lab.Implementation `json:"wireguard"`
	Case      string             `json:"case"`
	Symptom   string             `json:"symptom"`
	Expect    finding.ID         `json:"expect,omitempty"`
	Found     bool               `json:"found"` // Expect was reported (true when nothing was expected and nothing unexpected was)
	Findings  []finding.Finding  `json:"findings"`
	// Unexpected lists warning or critical findings the scenario did not cause on purpose.
	Unexpected []string    `json:"unexpected,omitempty"`
	Fix        []string    `json:"fix,omitempty"` // commands applied
	Before     Measurement `json:"before"`
	After      Measurement `json:"after"`
	// BenchBefore and BenchAfter are the full bench reports (both directions,
	// per-second intervals) behind the tunnel figures; nil for ECMP.
	BenchBefore *bench.Report `json:"bench_before,omitempty"`
	BenchAfter  *bench.Report `json:"bench_after,omitempty"`
	// Doctor is what "wgperf doctor" concluded on the broken lab;
	// DoctorMissed says where it fell short of the case (wrong cause first,
	// a probe the case needs not chosen).
	Doctor       *DoctorVerdict `json:"doctor,omitempty"`
	DoctorMissed string         `json:"doctor_missed,omitempty"`
	// Probes are the targeted probes doctor chose and what they showed.
	Probes []ProbeResult `json:"probes,omitempty"`
	// Recheck holds the probes played again after the fix (Scenario.Recheck);
	// StillFound says they still proved the expected finding.
	Recheck    []ProbeResult `json:"recheck,omitempty"`
	StillFound bool          `json:"still_found,omitempty"`
	MTU        *mtu.Result   `json:"mtu,omitempty"` // the path MTU search, when the scenario ran one
	// Uplinks are A's uplinks as doctor measured them (multi-WAN): the
	// tunnel over each, raw TCP, round trip and hops.
	Uplinks []uplinks.Uplink `json:"uplinks,omitempty"`
	// Spread is the fix's measurement by parallel flows around the tunnel,
	// before and after, for a change that spreads flows (a bond's hash,
	// catalog.Spread): the tunnel's one flow cannot show it.
	Spread *fix.Verification `json:"spread,omitempty"`
	// TunnelShares is each parallel tunnel's share of the bytes A sent during
	// a measurement (ECMP: the last one, after the fix).
	TunnelShares []float64 `json:"tunnel_shares,omitempty"`
	// Remeasured says the first after-fix measurement fell short of the pass
	// mark, or only just passed it, and the better of two stands.
	Remeasured bool `json:"remeasured,omitempty"`
	// Replayed says the scenario was played again, sized for a machine that
	// got busier while it ran (Play).
	Replayed bool `json:"replayed,omitempty"`
	// VerdictOnly says the run stopped after doctor's verdict (Options.VerdictOnly).
	VerdictOnly bool `json:"verdict_only,omitempty"`
	// Unavailable is the fix's refusal on this machine's kernel
	// (Scenario.Unavailable), in its own words: the run was judged on
	// doctor's verdict and that answer.
	Unavailable string `json:"fix_unavailable,omitempty"`
	// IdleProof says whether A still reached B through the tunnel after it
	// idled for Scenario.IdleProof seconds past the fix.
	IdleProof string `json:"idle_proof,omitempty"`
	// Sizing is the underlay rate chosen for this machine, and why.
	Sizing Sizing `json:"sizing"`
	// Skipped says the machine could not carry the scenario (Sizing.Skip).
	Skipped bool `json:"skipped,omitempty"`
	// Environment lists findings about the machine the lab runs on rather than
	// the case (a saturated CPU on a shared box): reported, not judged.
	Environment []string `json:"environment,omitempty"`
	Seconds     float64  `json:"seconds"`
	Pass        bool     `json:"pass"`
	Why         string   `json:"why,omitempty"` // why it did not pass
}

// DoctorVerdict is doctor's conclusion on the broken lab: its status, the
// causes it ranked (the machine's own, like a saturated CPU, left out) and
// its verdict, the first of them ("" when healthy or only notes remain).
type DoctorVerdict struct {
	Status  string       `json:"status"`
	First   finding.ID   `json:"first_cause,omitempty"`
	Causes  []finding.ID `json:"causes"`
	Seconds float64      `json:"seconds"`
}

// MarshalJSON writes empty lists as [], never null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	if p.Doctor != nil && p.Doctor.Causes == nil {
		d := *p.Doctor
		d.Causes = []finding.ID{}
		p.Doctor = &d
	}
	return json.Marshal(p)
}

// DoctorSays is doctor's verdict, the zero value when doctor did not run
// (a scenario skipped or stopped before it).
func (r *Result) DoctorSays() DoctorVerdict {
	if r.Doctor == nil {
		return DoctorVerdict{}
	}
	return *r.Doctor
}

// ProbeResult is the headline of an active probe, for the story.
type ProbeResult struct {
	Probe   Probe  `json:"probe"`
	Summary string `json:"summary"`
}

// Scaling is after/before tunnel throughput (ECMP).
func (r *Result) Scaling() float64 {
	if r.Before.Up.Tunnel <= 0 {
		return 0
	}
	return r.After.Up.Tunnel / r.Before.Up.Tunnel
}
