package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wgperf/wgperf/internal/lab"
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

// LabECMPVerify is the aggregate throughput to site B's network around the change.
type LabECMPVerify struct {
	Addr           string  `json:"addr"`
	Streams        int     `json:"streams"`
	TunnelsBefore  int     `json:"tunnels_before"`
	BeforeMbit     float64 `json:"before_mbit"`
	AfterMbit      float64 `json:"after_mbit"`
	Scaling        float64 `json:"scaling"` // after / before
	SecondsPerTest int     `json:"seconds_per_test"`
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
	measure := func(when string) (float64, error) {
		progress(fmt.Sprintf("%s: %d TCP streams to %s for %d s", when, o.Streams, lab.SiteBLAN, 1+o.Seconds))
		r, err := iperf.Run(ctx, l.Target("a"), l.Target("b"), iperf.Test{Addr: lab.SiteBLAN, Seconds: o.Seconds, Omit: 1, Parallel: o.Streams})
		if err != nil {
			return 0, fmt.Errorf("measure %s: %w", when, err)
		}
		return r.Mbit(), nil
	}
	if o.Verify {
		res.Verify = &LabECMPVerify{Addr: lab.SiteBLAN, Streams: o.Streams, TunnelsBefore: ecmpTunnelsInUse(ctx, l), SecondsPerTest: o.Seconds}
		if res.Verify.BeforeMbit, err = measure("before"); err != nil {
			return nil, err
		}
	}
	progress(fmt.Sprintf("building %d tunnels between A and B", o.Tunnels))
	if res.Commands, res.CommandsB, err = l.ECMP(ctx, o.Tunnels); err != nil {
		return nil, fmt.Errorf("lab %s: %v (wgperf lab down --name %s removes everything)", name, err, name)
	}
	res.Tunnels = l.Tunnels[:o.Tunnels]
	if o.Verify {
		if res.Verify.AfterMbit, err = measure("after"); err != nil {
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
		pw.printf("  before  %7.1f Mbit/s (%d tunnel%s)\n", v.BeforeMbit, v.TunnelsBefore, plural(v.TunnelsBefore))
		pw.printf("  after   %7.1f Mbit/s (%d tunnels)\n", v.AfterMbit, len(res.Tunnels))
		if v.Scaling > 0 {
			pw.printf("  scaling %.2fx\n", v.Scaling)
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
