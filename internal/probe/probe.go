// Package probe is what every targeted probe declares about itself: its
// Def, exported by the probe's own package (internal/probe/NAME) and listed
// once in internal/probes, which doctor's plan (each probe a step of it,
// with doctor's runner), the lab's scenarios, "doctor --help" and the JSON
// schema's probe list read.
package probe

import (
	"reflect"

	"github.com/wgperf/wgperf/internal/catalog"
)

// Def is one targeted probe: a measurement doctor runs when the evidence
// calls for it.
type Def struct {
	Name catalog.Probe
	// Doc is what it measures and when doctor runs it, one line ("doctor
	// --help" lists it).
	Doc string
	// FarEnd: the probe needs the other end of the tunnel (an iperf3
	// server, a sender there); without it the probe runs from one end.
	FarEnd bool
	// Raises are the findings it may raise: its package's Raises.
	Raises []catalog.ID
	// Report is the key of its result in doctor's JSON report ("mtu"), and
	// Result that result's type: doctor's report keeps the result by this
	// definition and writes it under that key (doctor.Results;
	// TestEveryProbeResultRoundTrips, internal/doctor).
	Report string
	Result reflect.Type
	// Schema is where the JSON Schema of its result is, as a $ref from
	// schemas/doctor.schema.json: the result's $defs entry in the schema of
	// the probe's own command ("mtu.schema.json#/$defs/result") or in
	// doctor's ("#/$defs/long_run"); of one result when Result is a list.
	// "make docs" writes the result's key into doctor's schema from it
	// (TestSchemaListsEveryProbe, internal/probes).
	Schema string
}
