package bench

import (
	"reflect"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe"
)

// LongRunDef is doctor's long run: the targeted probe that looks for
// collapse cycles and a sender that many flows outrun.
var LongRunDef = probe.Def{Name: catalog.ProbeLongRun, FarEnd: true, Raises: Raises,
	Doc:    "a 30-second per-second run and a parallel-stream run in the slow or unsteady direction, when the short runs leave it unexplained or --thorough asks: collapse cycles and many flows",
	Report: "long_run", Result: reflect.TypeFor[*LongRun](),
	Schema: "#/$defs/long_run"}

// LongRun is what the long run (a single stream, LongSeconds long) and the
// parallel run showed, in one direction.
type LongRun struct {
	Direction string `json:"direction"`
	Single    Run    `json:"single"` // one stream, LongSeconds long
	Cycles    Cycles `json:"cycles"`
	// Parallel is several streams (doctor's ParallelStreams) in the same
	// direction, as long as the bench's runs; ParallelRatio is ParallelGain.
	Parallel      *Run    `json:"parallel,omitempty"`
	ParallelRatio float64 `json:"parallel_ratio,omitempty"`
	// LossLimited: the single stream's sender backs off at every loss
	// (CUBIC, Reno), it retransmitted, and the parallel streams carried
	// ManyFlowsGain times its rate. Its cycles are the algorithm's,
	// not a knee's: tcp.congestion-control is reported and no cap is swept.
	LossLimited bool `json:"loss_limited,omitempty"`
	// Underlay is the link under the tunnel measured alone in the same
	// direction, after the tunnel collapsed, for two of its cycles;
	// PathCycles: it cycles alike (SharedCycle), so the cycle is the
	// path's and no cap is swept.
	Underlay       *Run    `json:"underlay,omitempty"`
	UnderlayCycles *Cycles `json:"underlay_cycles,omitempty"`
	PathCycles     bool    `json:"path_cycles,omitempty"`
}
