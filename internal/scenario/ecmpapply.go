package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// LabECMPOptions are "fix ecmp --apply"'s flags; the command holds them to
// their ranges (2..16 tunnels, 1..60 seconds).
type LabECMPOptions struct {
	Tunnels, Seconds, Streams int
	Verify                    bool
	Progress                  func(string) // progress lines; nil for none
}

// LabECMP is what "fix ecmp --apply" did in a lab.
type LabECMP struct {
	Lab       string         `json:"lab"`
	Tunnels   []lab.Tunnel   `json:"tunnels"`
	Commands  []string       `json:"commands"`   // run on A
	CommandsB []string       `json:"commands_b"` // run on B: it accepts A's every tunnel address on each tunnel
	Verify    *LabECMPVerify `json:"verify,omitempty"`
}

// MarshalJSON writes empty lists as [], never null.
func (l LabECMP) MarshalJSON() ([]byte, error) {
	type plain LabECMP
	p := plain(l)
	if p.Tunnels == nil {
		p.Tunnels = []lab.Tunnel{}
	}
	if p.Commands == nil {
		p.Commands = []string{}
	}
	if p.CommandsB == nil {
		p.CommandsB = []string{}
	}
	return json.Marshal(p)
}

// LabECMPVerify is the aggregate throughput to site B's network around the
// change, and what each run cost in retransmissions and reordering.
type LabECMPVerify struct {
	Addr           string   `json:"addr"`
	Streams        int      `json:"streams"`
	TunnelsBefore  int      `json:"tunnels_before"`
	BeforeMbit     float64  `json:"before_mbit"`
	AfterMbit      float64  `json:"after_mbit"`
	Scaling        float64  `json:"scaling"` // after / before
	SecondsPerTest int      `json:"seconds_per_test"`
	Before         ECMPCost `json:"before"`
	After          ECMPCost `json:"after"`
}

// ECMPCost is what a parallel run cost: spreading flows over tunnels whose
// paths differ can make TCP resend and reorder far more (the multi-tunnel
// case's aggregate nearly doubled, its retransmissions went from 432 to
// 119,501).
type ECMPCost struct {
	Retransmits int64 `json:"retransmits"` // iperf3's, the sender's
	// Reordered is how often A's TCP found a segment it had counted lost
	// delivered after all (bench.TCPOrder.ReorderSeen); -1 unread.
	Reordered int64 `json:"reordered"`
}

// String is a run's cost as the report prints it: "432 retransmits, 8 reordered".
func (c ECMPCost) String() string {
	s := fmt.Sprintf("%s retransmits", bench.Commas(c.Retransmits))
	if c.Reordered >= 0 {
		s += fmt.Sprintf(", %s reordered", bench.Commas(c.Reordered))
	}
	return s
}

// costlyECMP: the run after the change resent this many times what the one
// before did (and more than a stray few), which the report points out.
const costlyECMP = 4

// Costly reports the after-run resending costlyECMP times the before-run's
// retransmissions, and at least 100 more.
func (v LabECMPVerify) Costly() bool {
	return v.After.Retransmits >= costlyECMP*v.Before.Retransmits && v.After.Retransmits-v.Before.Retransmits >= 100
}

// parallelRun runs streams TCP flows from A to site B's network for
// seconds and reads A's TCP counters around it: the aggregate rate, and its
// cost in retransmissions and reordering.
func parallelRun(ctx context.Context, l *lab.Lab, streams, seconds int) (float64, ECMPCost, error) {
	a := l.Target("a")
	before := bench.TakeSample(ctx, a, bench.Baseline)
	r, err := iperf.Run(ctx, a, l.Target("b"), iperf.Test{Addr: lab.SiteBLAN, Seconds: seconds, Omit: 1, Parallel: streams})
	if err != nil {
		return 0, ECMPCost{}, err
	}
	cost := ECMPCost{Retransmits: r.Retransmits, Reordered: -1}
	if d := bench.Delta(bench.End{Host: a.String()}, before, bench.TakeSample(ctx, a, bench.Baseline)); d.TCP != nil {
		cost.Reordered = d.TCP.ReorderSeen()
	}
	return r.Mbit(), cost, nil
}

// ApplyLabECMP ("fix ecmp --apply") builds N parallel tunnels and the multipath route in the lab
// that host (its site A) belongs to, measuring before and after with Verify.
// Real hosts need new configs and keys on both ends: PlanECMP prints them.
func ApplyLabECMP(ctx context.Context, host string, o LabECMPOptions) (*LabECMP, error) {
	name, node, ok := lab.NodeOf(host)
	if !ok {
		return nil, fmt.Errorf("ecmp --apply builds tunnels only in a wgperf lab (--host netns:wgl-NAME-a): real hosts need new configs and keys on both ends, so wgperf prints them; run without --apply and install them on both sites")
	}
	if node != "a" {
		return nil, fmt.Errorf("ecmp --apply starts from site A of lab %s: --host netns:%s", name, lab.Netns(name, "a"))
	}
	if o.Streams == 0 {
		o.Streams = min(8*o.Tunnels, 128)
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	l, err := lab.Load(name)
	if err != nil {
		return nil, err
	}
	// New tunnel ends run this binary, like the ones "lab up" started.
	if l.Executable, err = os.Executable(); err != nil {
		return nil, err
	}
	res := &LabECMP{Lab: name}
	measure := func(when string) (float64, ECMPCost, error) {
		progress(fmt.Sprintf("%s: %d TCP streams to %s for %d s", when, o.Streams, lab.SiteBLAN, 1+o.Seconds))
		mbit, cost, err := parallelRun(ctx, l, o.Streams, o.Seconds)
		if err != nil {
			return 0, cost, fmt.Errorf("measure %s: %w", when, err)
		}
		return mbit, cost, nil
	}
	if o.Verify {
		res.Verify = &LabECMPVerify{Addr: lab.SiteBLAN, Streams: o.Streams, TunnelsBefore: ecmpTunnelsInUse(ctx, l), SecondsPerTest: o.Seconds}
		if res.Verify.BeforeMbit, res.Verify.Before, err = measure("before"); err != nil {
			return nil, err
		}
	}
	progress(fmt.Sprintf("building %d tunnels between A and B", o.Tunnels))
	if res.Commands, res.CommandsB, err = l.ECMP(ctx, o.Tunnels); err != nil {
		return nil, fmt.Errorf("lab %s: %v (wgperf lab down --name %s removes everything)", name, err, name)
	}
	res.Tunnels = l.Tunnels[:o.Tunnels]
	if o.Verify {
		if res.Verify.AfterMbit, res.Verify.After, err = measure("after"); err != nil {
			return nil, err
		}
		if res.Verify.BeforeMbit > 0 {
			res.Verify.Scaling = res.Verify.AfterMbit / res.Verify.BeforeMbit
		}
	}
	return res, nil
}

// WriteText prints the tunnels built, the commands run and the measurement.
func (res *LabECMP) WriteText(w io.Writer) error {
	pw := &printer{w: w}
	pw.printf("Lab %s now has %d tunnels between A and B:\n", res.Lab, len(res.Tunnels))
	for _, t := range res.Tunnels {
		via := ""
		if t.UplinkA != "" {
			via = ", A sends via " + t.UplinkA
		}
		pw.printf("  %s (%s) <-> %s (%s), port %d%s\n", t.IfA, t.AddrA, t.IfB, t.AddrB, t.Port, via)
	}
	pw.printf("Ran on A:\n")
	for _, c := range res.Commands {
		pw.printf("  %s\n", c)
	}
	if len(res.CommandsB) > 0 {
		pw.printf("Ran on B:\n")
		for _, c := range res.CommandsB {
			pw.printf("  %s\n", c)
		}
	}
	if v := res.Verify; v != nil {
		pw.printf("Aggregate throughput to %s (%d TCP streams, %d s):\n", v.Addr, v.Streams, v.SecondsPerTest)
		pw.printf("  before  %7.1f Mbit/s (%d tunnel%s), %s\n", v.BeforeMbit, v.TunnelsBefore, plural(v.TunnelsBefore), v.Before)
		pw.printf("  after   %7.1f Mbit/s (%d tunnels), %s\n", v.AfterMbit, len(res.Tunnels), v.After)
		if v.Scaling > 0 {
			pw.printf("  scaling %.2fx\n", v.Scaling)
		}
		if v.Costly() {
			pw.printf("  cost: retransmissions went from %s to %s: the tunnels' paths differ (delay, queues), so flows hashed onto them "+
				"see loss and reordering the one tunnel did not (the multi-tunnel case's went from 432 to 119,501 for a 1.8x aggregate)\n",
				bench.Commas(v.Before.Retransmits), bench.Commas(v.After.Retransmits))
		}
	}
	pw.printf("This is the lab only; wgperf lab down --name %s removes it.\n", res.Lab)
	return pw.err
}

// ecmpTunnelsInUse counts the next hops of A's route to site B's network.
func ecmpTunnelsInUse(ctx context.Context, l *lab.Lab) int {
	out, err := l.Target("a").Run(ctx, "ip", "route", "show", lab.SiteBNet)
	if err != nil {
		return 1
	}
	if n := strings.Count(string(out), "nexthop"); n > 0 {
		return n
	}
	return 1
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// printer keeps the first write error, so a renderer checks it once.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}
