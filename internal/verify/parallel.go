package verify

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

// Parallel is one run of parallel TCP streams: how ECMP is measured, by
// "fix ecmp --verify" and the lab's ecmp scenario alike. One flow takes one
// tunnel, so only several show what several tunnels carry together.
type Parallel struct {
	Client, Server target.Target
	Addr           string // where the streams go (behind the tunnels' routes)
	Streams        int
	Seconds        int // after a 1 s warm-up
	Port           int // iperf3 port (0: iperf.DefaultPort)
}

// Cost is what a parallel run cost: spreading flows over tunnels whose
// paths differ can make TCP resend and reorder far more (the multi-tunnel
// case's aggregate nearly doubled, its retransmissions went from 432 to
// 119,501).
type Cost struct {
	Retransmits int64 `json:"retransmits"` // iperf3's, the sender's
	// Reordered is how often the client's TCP found a segment it had counted
	// lost delivered after all (bench.TCPOrder.ReorderSeen); -1 unread.
	Reordered int64 `json:"reordered"`
}

// String is a run's cost as reports print it: "432 retransmits, 8 reordered".
func (c Cost) String() string {
	s := fmt.Sprintf("%s retransmits", bench.Commas(c.Retransmits))
	if c.Reordered >= 0 {
		s += fmt.Sprintf(", %s reordered", bench.Commas(c.Reordered))
	}
	return s
}

// costly: the run after the change resent this many times what the one
// before did (and more than a stray few), which a report points out.
const costly = 4

// Costly reports after resending costly times before's retransmissions, and
// at least 100 more.
func Costly(before, after Cost) bool {
	return after.Retransmits >= costly*before.Retransmits && after.Retransmits-before.Retransmits >= 100
}

// Run runs the streams and reads the client's TCP counters around them: the
// aggregate rate the server received in Mbit/s, and its cost. A black hole
// can keep iperf3 from finishing: the run is bounded.
func (p Parallel) Run(ctx context.Context) (float64, Cost, error) {
	before := bench.TakeSample(ctx, p.Client, bench.Baseline)
	r, err := iperf.Run(ctx, p.Client, p.Server, iperf.Test{Addr: p.Addr, Port: p.Port, Seconds: p.Seconds, Omit: 1,
		Parallel: p.Streams, Timeout: time.Duration(p.Seconds+15) * time.Second})
	if err != nil {
		return 0, Cost{}, fmt.Errorf("iperf3 %s → %s, %d streams: %w", p.Client, p.Addr, p.Streams, err)
	}
	cost := Cost{Retransmits: r.Retransmits, Reordered: -1}
	if d := bench.Delta(bench.End{Host: target.Of(p.Client)}, before, bench.TakeSample(ctx, p.Client, bench.Baseline)); d.TCP != nil {
		cost.Reordered = d.TCP.ReorderSeen()
	}
	return r.ReceivedMbit, cost, nil
}

// AggregateName is the figure an ECMP fix is kept by.
const AggregateName = "aggregate throughput"

// NewParallel is the Measure of an ECMP fix: the aggregate of p's streams,
// with each run's cost in its detail, and after the change the cost line
// when retransmissions went up by far.
func NewParallel(p Parallel, progress io.Writer) fix.Measure {
	var first *Cost
	return func(ctx context.Context) (fix.Measurement, error) {
		if progress != nil {
			fmt.Fprintf(progress, "%d TCP streams to %s (%ds)... ", p.Streams, p.Addr, 1+p.Seconds)
		}
		mbit, cost, err := p.Run(ctx)
		if err != nil {
			return fix.Measurement{}, err
		}
		if progress != nil {
			fmt.Fprintf(progress, "%.1f Mbit/s\n", mbit)
		}
		detail := fmt.Sprintf("%d TCP streams to %s, %d s: %s", p.Streams, p.Addr, p.Seconds, cost)
		if first == nil {
			first = &cost
		} else if Costly(*first, cost) {
			detail += fmt.Sprintf("; cost: retransmissions went from %s to %s: the tunnels' paths differ (delay, queues), so flows hashed "+
				"onto them see loss and reordering the one tunnel did not (the multi-tunnel case's went from 432 to 119,501 for a 1.8x aggregate)",
				bench.Commas(first.Retransmits), bench.Commas(cost.Retransmits))
		}
		return fix.Measurement{Name: AggregateName, Value: mbit, Unit: "Mbit/s", Detail: detail}, nil
	}
}
