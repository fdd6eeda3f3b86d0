// Package verify measures a tunnel around a change: the before/after figure
// "wgperf fix --verify" and doctor --fix keep or roll back a fix by. Package
// fix takes the measurement as a function and imports no probe.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probes"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Config says between which two hosts "fix --verify" measures.
type Config struct {
	// Host is where the fix is applied; Peer the far end of its tunnel, where
	// the iperf3 server runs.
	Host, Peer target.Target
	Seconds    int // per iperf3 run, after a 1 s warm-up (default 3)
	Port       int // iperf3 port (0: iperf.DefaultPort)
	Progress   io.Writer
	// Record, when set, keeps what each measurement ran, for a report.
	Record *Record
	// Prior, when set, is the tunnel as measured from Host just before the
	// change: the first measurement reports it instead of running the same
	// runs again.
	Prior *Prior
}

// Prior is a measurement made just before the change by the caller (doctor's
// bench and path MTU search), with nothing changed since.
type Prior struct {
	// Tunnel is one stream through the tunnel, Host sending (Up) and
	// receiving (Down); a run that stalled is 0.
	Tunnel bench.Throughput
	// MTU is the path MTU search from Host to the peer's endpoint; nil when
	// none ran.
	MTU *mtu.Result
	// Source says where the figures come from ("doctor's bench").
	Source string
}

// Record is what the measurements of "fix --verify" ran: one bench report per
// measurement, in order (before the change, then after), and the path MTU
// probe of an MTU fix. A stalled run of an MTU fix has no result.
type Record struct {
	Benches []*bench.Report
	MTU     *mtu.Result
}

func (c Config) record(rep *bench.Report) {
	if c.Record != nil {
		c.Record.Benches = append(c.Record.Benches, rep)
	}
}

// IsMTUPlan reports whether the plan changes packet sizes (WireGuard MTU, MSS
// clamp): those are verified with the path MTU probe plus a short bench that
// counts a stalled run as 0 Mbit/s, since a stall is the symptom they cure.
func IsMTUPlan(p *fix.Plan) bool {
	for _, it := range p.Items {
		if it.Step.Done {
			continue
		}
		if it.Action.Kind == remedy.KindWGMTU || it.Action.Kind == remedy.KindMSSClamp {
			return true
		}
	}
	return false
}

// IsSpreadPlan reports whether the plan changes how a bond spreads flows
// over its links (its hash policy): the tunnel is one flow, which rides one
// link under either hash, so only parallel flows around it show the gain.
func IsSpreadPlan(p *fix.Plan) bool {
	for _, it := range p.Items {
		if !it.Step.Done && it.Action.Kind == remedy.KindBondHash {
			return true
		}
	}
	return false
}

// SpreadStreams is how many parallel flows measure a bond's spread: the
// ECMP case ran 2 over its 3 links; 4 leave none of 2 or 3 idle when the
// hash spreads them.
const SpreadStreams = 4

// New finds the tunnel between Host and Peer and returns the Measure
// that suits the plan: for MTU fixes the mtu probe and a short bench, for
// a bond's hash parallel flows around the tunnel (spreadMeasure), for
// everything else a quick bench.Measure. The figure is the tunnel throughput,
// the mean of upload and download, so a fix that helps one direction counts.
func New(ctx context.Context, p *fix.Plan, c Config) (fix.Measure, error) {
	if c.Seconds <= 0 {
		c.Seconds = 3
	}
	ep, err := discover.Tunnel(ctx, c.Host, c.Peer)
	if err != nil {
		return nil, fmt.Errorf("%s to %s: %w", c.Host, c.Peer, err)
	}
	if IsMTUPlan(p) {
		return mtuMeasure(c, ep), nil
	}
	if IsSpreadPlan(p) {
		if ep.UnderlayAddr == "" {
			return nil, fmt.Errorf("%s to %s: no endpoint address to measure parallel flows around the tunnel", c.Host, c.Peer)
		}
		return spreadMeasure(c, ep), nil
	}
	return benchMeasure(c, ep), nil
}

const throughputName = "tunnel throughput"

// benchMeasure runs a quick bench (one stream, upload and download, tunnel only).
func benchMeasure(c Config, ep discover.Endpoints) fix.Measure {
	prior := c.Prior
	return func(ctx context.Context) (fix.Measurement, error) {
		if prior != nil {
			m := throughput(prior.Tunnel, ep.TunnelAddr, prior.Source)
			prior = nil
			return m, nil
		}
		rep, err := bench.Measure(ctx, bench.Config{Client: c.Host, Server: c.Peer, TunnelAddr: ep.TunnelAddr,
			ClientInterface: ep.ClientInterface, ServerInterface: ep.ServerInterface, Quick: true, Omit: 1, Seconds: c.Seconds,
			Port: c.Port, Progress: c.Progress})
		if err != nil {
			return fix.Measurement{}, err
		}
		c.record(rep)
		return throughput(rep.Throughput(), ep.TunnelAddr, ""), nil
	}
}

// mtuMeasure probes the path MTU under the tunnel once (a fix does not change
// it), then each time reads the WireGuard MTU and runs one short iperf3 upload
// and download through the tunnel.
func mtuMeasure(c Config, ep discover.Endpoints) fix.Measure {
	var path *mtu.Result
	prior := c.Prior
	if prior != nil && prior.MTU != nil && prior.MTU.Addr == ep.UnderlayAddr {
		path = prior.MTU
	}
	return func(ctx context.Context) (fix.Measurement, error) {
		if path == nil && ep.UnderlayAddr != "" {
			// The DF search alone, from this end: a fix does not move the path.
			mc := probes.Tunnel{Client: c.Host, Endpoints: ep}.MTU()
			mc.Progress = c.Progress
			res, err := mtu.Run(ctx, mc)
			if err != nil {
				return fix.Measurement{}, fmt.Errorf("path MTU probe: %w", err)
			}
			path = res
			if c.Record != nil {
				c.Record.MTU = res
			}
		}
		var notes []string
		if path != nil && path.PathMTU > 0 {
			notes = append(notes, fmt.Sprintf("path MTU %d", path.PathMTU))
		}
		if b, err := c.Host.ReadFile(ctx, "/sys/class/net/"+ep.ClientInterface+"/mtu"); err == nil {
			now, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			n := fmt.Sprintf("%s MTU %d", ep.ClientInterface, now)
			if path != nil && path.WGMTU > 0 {
				if now > path.WGMTU {
					n += fmt.Sprintf(" (too large: at most %d fits)", path.WGMTU)
				} else {
					n += " (fits)"
				}
			}
			notes = append(notes, n)
		}
		if prior != nil {
			t := prior.Tunnel
			if prior.Source != "" {
				notes = append(notes, prior.Source)
			}
			prior = nil
			return throughput(t, ep.TunnelAddr, strings.Join(notes, ", ")), nil
		}
		var t bench.Throughput
		mbit := [2]*float64{&t.Up.Tunnel, &t.Down.Tunnel}
		rep := &bench.Report{Client: target.Of(c.Host), Server: target.Of(c.Peer), TunnelAddr: ep.TunnelAddr, Omit: 1, Seconds: c.Seconds}
		for i, reverse := range []bool{false, true} {
			run := bench.Run{Spec: bench.Spec{Path: bench.PathTunnel, Direction: map[bool]string{false: bench.Upload, true: bench.Download}[reverse], Streams: 1},
				Addr: ep.TunnelAddr}
			if c.Progress != nil {
				fmt.Fprintf(c.Progress, "tunnel %s (%ds)... ", map[bool]string{false: "upload", true: "download"}[reverse], 1+c.Seconds)
			}
			r, err := iperf.Run(ctx, c.Host, c.Peer, iperf.Test{Addr: ep.TunnelAddr, Port: c.Port, Seconds: c.Seconds, Omit: 1, Reverse: reverse,
				Timeout: time.Duration(c.Seconds+9) * time.Second})
			switch {
			case errors.Is(err, iperf.ErrStalled):
				// Oversized packets vanishing is what an MTU fix cures: count it as nothing through.
				notes = append(notes, map[bool]string{false: "upload", true: "download"}[reverse]+" stalled")
				run.Error = err.Error()
			case err != nil:
				return fix.Measurement{}, err
			default:
				*mbit[i] = r.Mbit()
				run.Result, run.Stats = r, bench.Summarise(r)
			}
			rep.Runs = append(rep.Runs, run)
			if c.Progress != nil {
				fmt.Fprintf(c.Progress, "%.1f Mbit/s\n", *mbit[i])
			}
		}
		c.record(rep)
		return throughput(t, ep.TunnelAddr, strings.Join(notes, ", ")), nil
	}
}

func throughput(t bench.Throughput, addr, extra string) fix.Measurement {
	d := fmt.Sprintf("upload %.1f, download %.1f Mbit/s to %s", t.Up.Tunnel, t.Down.Tunnel, addr)
	if extra != "" {
		d += "; " + extra
	}
	return fix.Measurement{Name: throughputName, Value: (t.Up.Tunnel + t.Down.Tunnel) / 2, Unit: "Mbit/s", Detail: d}
}

// Last is the tunnel as the last measurement left it; ok is false when
// nothing was recorded or its tunnel runs neither finished nor stalled.
func (r *Record) Last() (t bench.Throughput, ok bool) {
	if r == nil || len(r.Benches) == 0 {
		return bench.Throughput{}, false
	}
	last := r.Benches[len(r.Benches)-1]
	return last.Throughput(), last.TunnelMeasured()
}

// Fix is how "wgperf fix --verify" measures a plan (fix.Request.Verify): New
// with c, after a progress line, its error named by the flag.
func (c Config) Fix(progress func(string)) func(context.Context, *fix.Plan) (fix.Measure, error) {
	return func(ctx context.Context, p *fix.Plan) (fix.Measure, error) {
		progress("finding the tunnel between " + c.Host.String() + " and " + c.Peer.String())
		m, err := New(ctx, p, c)
		if err != nil {
			return nil, fmt.Errorf("--verify: %w", err)
		}
		return m, nil
	}
}

const spreadName = "parallel flows around the tunnel"

// spreadMeasure runs parallel upload flows from Host to the peer's
// endpoint, around the tunnel: what a bond's transmit hash spreads over its
// links. Host's own bond decides where its flows leave, so the fixed host
// sends. The flows leave from client ports the fixed hash spreads over
// every slave (remedy.SpreadClientPort), the same before and after: the
// kernel's own ports put 4 flows on one slave of 2 in 1 of 3 lab runs, and
// the measurement would then show no gain and roll a good fix back.
func spreadMeasure(c Config, ep discover.Endpoints) fix.Measure {
	var flows *SpreadFlows
	return func(ctx context.Context) (fix.Measurement, error) {
		if flows == nil {
			flows = ChooseSpreadFlows(ctx, c.Host, ep.UnderlayAddr, c.Port)
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "underlay upload, %d streams (%ds)... ", flows.Streams, 1+c.Seconds)
		}
		run := bench.Run{Spec: bench.Spec{Path: bench.PathUnderlay, Direction: bench.Upload, Streams: flows.Streams}, Addr: ep.UnderlayAddr}
		r, err := iperf.Run(ctx, c.Host, c.Peer, iperf.Test{Addr: ep.UnderlayAddr, Port: c.Port, Seconds: c.Seconds, Omit: 1,
			Parallel: flows.Streams, CPort: flows.CPort, Timeout: time.Duration(c.Seconds+25) * time.Second})
		if err != nil {
			return fix.Measurement{}, fmt.Errorf("%d streams around the tunnel to %s: %w", flows.Streams, ep.UnderlayAddr, err)
		}
		run.Result, run.Stats = r, bench.Summarise(r)
		c.record(&bench.Report{Client: target.Of(c.Host), Server: target.Of(c.Peer), Omit: 1, Seconds: c.Seconds, Runs: []bench.Run{run}})
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "%.1f Mbit/s\n", run.Stats.Mbit)
		}
		return fix.Measurement{Name: spreadName, Value: run.Stats.Mbit, Unit: "Mbit/s",
			Detail: fmt.Sprintf("%d streams upload to %s%s, %d retransmits", flows.Streams, ep.UnderlayAddr, flows.How, run.Stats.Retransmits)}, nil
	}
}

// SpreadFlows are the parallel flows of a measurement around the tunnel
// from a host with a bond: doctor's, before it suggests ECMP over the bond,
// and the hash fix's, before and after.
type SpreadFlows struct {
	Streams int
	CPort   int    // the first client port; 0: the kernel's own ports
	How     string // how the ports were chosen, for a measurement's detail
}

// ChooseSpreadFlows reads the bond host's route to the peer's underlay
// address leaves by and chooses SpreadStreams flows, two a slave where it
// has more slaves, on client ports layer3+4 spreads over every slave (port
// is the iperf3 server's, 0 for its default).
func ChooseSpreadFlows(ctx context.Context, host target.Target, underlayAddr string, port int) *SpreadFlows {
	f := &SpreadFlows{Streams: SpreadStreams, How: " (the kernel's client ports)"}
	dst, err := netip.ParseAddr(underlayAddr)
	if err != nil {
		return f
	}
	path, err := remedy.ReadBondPath(ctx, &remedy.Env{T: host}, dst)
	if err != nil || path.Members < 2 {
		return f
	}
	f.Streams = max(SpreadStreams, 2*path.Members)
	if port == 0 {
		port = iperf.DefaultPort
	}
	if p, ok := remedy.SpreadClientPort(path.Src, dst, port, f.Streams, path.Members); ok {
		f.CPort = p
		f.How = fmt.Sprintf(" from ports %d-%d, which layer3+4 spreads over %s's %d slaves", p, p+f.Streams-1, path.Dev, path.Members)
	}
	return f
}
