// Package sizing shapes a lab's underlay to what this machine can carry.
//
// A lab verdict is a ratio of the tunnel to the underlay measured in the same
// run, so it only proves something when a healthy tunnel could carry the
// underlay's rate. On the lab every node, the userspace WireGuard ends and the
// delay element share the machine's CPUs: a small VM, a CI runner or a laptop
// building something beside the lab carries less than a catalog's rate. The
// underlay is therefore shaped below what a healthy tunnel of the same shape
// carries on this machine, measured first. Lab scenarios and the root tests
// that judge a ratio both size their labs here.
package sizing

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/iperf"
)

const (
	// Headroom is the share of the measured healthy-tunnel capacity the
	// underlay is shaped to. Measured on a 2-core box: with a build running
	// beside the lab (load 5-7), a 10 ms-delay tunnel shaped to half its
	// unshaped capacity dipped to 0.76-0.89 of the underlay in 2 s runs; at a
	// quarter it held 0.94-0.96 (the header overhead's ceiling) every time.
	Headroom = 0.3
	// MinRateMbit is the slowest underlay a lab case still means something at;
	// a machine that cannot carry it skips the case instead of failing it.
	MinRateMbit = 20
	// rateStepMbit rounds chosen rates down, so logs read like a shaper's setting.
	rateStepMbit = 10
)

// Shape is what changes a tunnel's ceiling on one machine: the delay
// element's work, and how many flows and tunnels carry the load.
type Shape struct {
	// WireGuard is the implementation of the tunnel ends: the kernel's and
	// wireguard-go spend the CPUs differently.
	WireGuard lab.Implementation
	// Congestion is the nodes' TCP congestion control ("" the host's).
	Congestion string
	Topology   lab.Topology
	DelayMs    int
	Streams    int
}

// Capacities measures, once per shape, what a healthy tunnel carries on this
// machine, and remembers it for the other labs of a run. The zero value is
// ready; share one across the labs of a run.
type Capacities struct {
	mu   sync.Mutex
	seen map[Shape]float64
}

// Measure returns the healthy, unshaped tunnel's throughput for shape in
// Mbit/s (a seconds-long iperf3 run), building a lab named labName of that
// shape with the wgperf binary exe on first use.
func (c *Capacities) Measure(ctx context.Context, shape Shape, exe, labName string, seconds int) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if mbit, ok := c.seen[shape]; ok {
		return mbit, nil
	}
	cfg := lab.Config{Name: labName, WireGuard: shape.WireGuard, Congestion: shape.Congestion, Topology: shape.Topology, Underlay: lab.Shape{DelayMs: shape.DelayMs}}
	l, err := lab.Up(ctx, cfg, exe)
	if err != nil {
		return 0, fmt.Errorf("capacity lab: %w", err)
	}
	defer lab.Down(context.WithoutCancel(ctx), cfg.Name)
	res, err := iperf.Run(ctx, l.Target("a"), l.Target("b"), iperf.Test{Addr: l.Node("b").TunnelAddr, Seconds: seconds, Omit: 1,
		Parallel: max(shape.Streams, 1), Timeout: time.Duration(seconds+15) * time.Second})
	if err != nil {
		return 0, fmt.Errorf("capacity: iperf3 through the tunnel: %w", err)
	}
	if c.seen == nil {
		c.seen = map[Shape]float64{}
	}
	c.seen[shape] = res.ReceivedMbit
	return res.ReceivedMbit, nil
}

// Forget drops what was measured for shape, so the next sizing measures the
// machine as it is now.
func (c *Capacities) Forget(shape Shape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, shape)
}

// Sizing is the underlay rate a lab runs at on this machine and why.
type Sizing struct {
	// CatalogMbit is the rate as written (an upper bound).
	CatalogMbit int `json:"catalog_mbit"`
	// CapacityMbit is what a healthy tunnel of the lab's shape carried here.
	CapacityMbit float64 `json:"capacity_mbit"`
	// RateMbit is the rate each shaped uplink runs at.
	RateMbit int `json:"rate_mbit"`
	// Skip says why the machine cannot run the lab ("" when it can).
	Skip string `json:"skip,omitempty"`
	// HeldBack says a ceiling (Held) set RateMbit below what the machine
	// could carry.
	HeldBack bool `json:"held_back,omitempty"`
}

func (s Sizing) String() string {
	if s.Skip != "" {
		return s.Skip
	}
	why := fmt.Sprintf("a healthy tunnel of this shape carries %.0f Mbit/s on this machine", s.CapacityMbit)
	if s.HeldBack {
		return fmt.Sprintf("underlay held at %d Mbit/s (catalog: at most %d), other labs share this machine: %s", s.RateMbit, s.CatalogMbit, why)
	}
	if s.RateMbit == s.CatalogMbit {
		return fmt.Sprintf("underlay at the catalog's %d Mbit/s: %s", s.RateMbit, why)
	}
	return fmt.Sprintf("underlay at %d Mbit/s (catalog: at most %d): %s; %.0f%% of it leaves the rest to other load",
		s.RateMbit, s.CatalogMbit, why, Headroom*100)
}

// Size picks the underlay rate: the catalog's, or less when a healthy tunnel
// of the same shape cannot carry it here with headroom. Parallel tunnels
// (ECMP) share the machine, so each uplink gets its share.
func Size(catalogMbit int, capacityMbit float64, uplinks int) Sizing {
	s := Sizing{CatalogMbit: catalogMbit, CapacityMbit: capacityMbit}
	fit := Headroom * capacityMbit / float64(max(uplinks, 1))
	s.RateMbit = min(catalogMbit, int(math.Floor(fit/rateStepMbit))*rateStepMbit)
	if s.RateMbit < MinRateMbit {
		s.RateMbit = 0
		s.Skip = fmt.Sprintf("skipped: a healthy tunnel of this shape carries only %.0f Mbit/s on this machine, too little to judge (need %.0f)",
			capacityMbit, float64(MinRateMbit*max(uplinks, 1))/Headroom)
	}
	return s
}

// Held is s with its rate held at most ceilingMbit (0: no ceiling), for a lab
// that shares the machine with other labs started after it was sized: the
// capacity was measured once, and the streams beside it (make test plays
// seven) take the CPU its wireguard-go ends need. A lab sized at 200 Mbit/s on
// a still idle machine carried 0.88 once three more streams ran; the catalog
// holds its verdicts at 20 (lab run --all --rate 20).
func (s Sizing) Held(ceilingMbit int) Sizing {
	if ceilingMbit <= 0 || s.Skip != "" || s.RateMbit <= ceilingMbit {
		return s
	}
	s.RateMbit, s.HeldBack = ceilingMbit, true
	return s
}
