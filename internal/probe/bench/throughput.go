package bench

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// DirRate is one direction's single-stream TCP throughput through the tunnel
// and around it, in Mbit/s: the bench's figure of each run (Run.Rate, the median of its samples), 0
// where the run did not run or did not finish.
type DirRate struct {
	Tunnel   float64 `json:"tunnel_mbit"`
	Underlay float64 `json:"underlay_mbit"`
	// Samples is how many runs the figures are the median of, when more
	// than one (repeat.go).
	Samples int `json:"samples,omitempty"`
}

// samplesText is ", median of N" for a repeated direction, else "".
func (d DirRate) samplesText() string {
	if d.Samples < 2 {
		return ""
	}
	return fmt.Sprintf(", median of %d", d.Samples)
}

// Figures is the direction as "17.6/19.2 Mbit/s (0.92)": tunnel, underlay,
// ratio, and the samples behind them when repeated.
func (d DirRate) Figures() string {
	return fmt.Sprintf("%.1f/%.1f Mbit/s (%.2f%s)", d.Tunnel, d.Underlay, d.Ratio(), d.samplesText())
}

// Ratio is tunnel/underlay, 0 when the underlay was not measured.
func (d DirRate) Ratio() float64 {
	if d.Underlay <= 0 {
		return 0
	}
	return d.Tunnel / d.Underlay
}

// Throughput is the tunnel against the link under it, both ways: what doctor
// judges, "fix --verify" keeps a change by and a lab scenario measures before
// and after its fix. Report.Throughput reads it from a bench.
type Throughput struct {
	Up   DirRate `json:"upload"`   // the client sends
	Down DirRate `json:"download"` // the server sends
}

// Reversed is the same figures seen from the other end: its upload is this
// download.
func (t Throughput) Reversed() Throughput {
	return Throughput{Up: t.Down, Down: t.Up}
}

// Worst is the lower tunnel/underlay ratio of the two directions, or the
// upload's when the download's underlay was not measured.
func (t Throughput) Worst() float64 {
	if t.Down.Underlay > 0 {
		return min(t.Up.Ratio(), t.Down.Ratio())
	}
	return t.Up.Ratio()
}

// Throughput reads the report's single-stream TCP runs per direction: the one
// reading of a bench's tunnel against its underlay.
func (r *Report) Throughput() Throughput {
	var t Throughput
	for _, run := range r.singleStream() {
		d := &t.Up
		if run.Direction == Download {
			d = &t.Down
		}
		if run.Result == nil {
			continue
		}
		if run.Path == PathTunnel {
			d.Tunnel = run.Rate()
		} else if u := find(r, PathUnderlay, run.Direction, 1); u != nil {
			d.Underlay = u.Rate() // through hubs: the slowest hop's
		}
		if n := run.Spread().Samples; n > 1 {
			d.Samples = max(d.Samples, n)
		}
	}
	return t
}

// TunnelMeasured reports whether the single-stream tunnel runs of both
// directions finished or stalled: a stall is a measurement (nothing got
// through, 0 Mbit/s), any other failure is not.
func (r *Report) TunnelMeasured() bool {
	var up, down bool
	for _, run := range r.singleStream() {
		if run.Path != PathTunnel || (run.Result == nil && !Stalled(run)) {
			continue
		}
		if run.Direction == Download {
			down = true
		} else {
			up = true
		}
	}
	return up && down
}

// UnderlayMeasured reports whether the single-stream underlay runs of both
// directions finished with traffic (LAN-host and ECMP benches have none).
func (r *Report) UnderlayMeasured() bool {
	t := r.Throughput()
	return t.Up.Underlay > 0 && t.Down.Underlay > 0
}

// Stalled reports whether a run stopped because iperf3 stalled (a black hole
// keeps bulk TCP from finishing).
func Stalled(run Run) bool {
	return run.Result == nil && strings.Contains(run.Error, iperf.ErrStalled.Error())
}

// singleStream is the report's single-stream TCP runs (none of a nil report).
func (r *Report) singleStream() []Run {
	if r == nil {
		return nil
	}
	var out []Run
	for _, run := range r.Runs {
		if run.Streams == 1 && run.UDPMbit == 0 {
			out = append(out, run)
		}
	}
	return out
}
