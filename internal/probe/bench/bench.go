package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wgperf/wgperf/internal/outfile"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

// Config is one bench between two hosts.
type Config struct {
	Client, Server target.Target
	// TunnelAddr is the server's WireGuard address; UnderlayAddr its address
	// under the tunnel ("" skips the underlay runs and the ratio).
	TunnelAddr, UnderlayAddr         string
	ClientInterface, ServerInterface string // for fixes and naming counters; may be ""
	// ClientPort and ServerPort are the ends' WireGuard listen ports (0:
	// unknown): the counters of the UDP socket bound to one are the tunnel's.
	ClientPort, ServerPort int
	Parallel               int // streams of the parallel runs; < 2 skips them
	Omit, Seconds          int
	Quick                  bool    // single stream only, short runs
	UDPMbit                float64 // > 0 adds UDP control runs (loss without TCP)
	Hops                   int     // WireGuard hops between client and server (expectation 50% when > 1)
	Port                   int
	// UnderlayPort, when > 0, is the iperf3 port of the underlay runs: one
	// the far end lets in where only WireGuard's port is forwarded to it.
	UnderlayPort int
	Progress     io.Writer // nil: quiet
	// Timeout bounds each run (0: iperf's default, Omit+Seconds+20 s, room
	// for slow ssh hosts); a run past it has stalled, as over a black hole.
	Timeout time.Duration
	// IperfJSONDir, when set, receives each run's iperf3 -J document as
	// NN-PATH-DIRECTION-Nstreams[-udp].json, for tools that read iperf3's own JSON.
	IperfJSONDir string
	// Drops opens a kernel drop sampler on each end (nil: none; kerneldrops.go).
	Drops Samplers
	// Samples is the most runs a cell takes when one cannot settle its
	// verdict (0: DefaultSamples; 1: never repeat; repeat.go).
	Samples int
	// Legs are the path's hops when the tunnel runs through hubs (--via: a
	// road-warrior hub, a multi-hop path), client to server: each hop's own
	// underlay is measured and the tunnel judged against the slowest
	// (hops.go). Empty: one underlay, UnderlayAddr's.
	Legs []Leg
	// Clients are more clients beside Client: after the plan, every client
	// loads the server at once through the tunnel, Parallel streams each
	// (clients.go).
	Clients []target.Target
}

// Plan lists the runs of a bench, tunnel and underlay side by side so both see
// the same conditions. It is pure.
func Plan(c Config) []Spec {
	streams := []int{1}
	if c.Parallel > 1 && !c.Quick {
		streams = append(streams, c.Parallel)
	}
	paths := []string{PathTunnel}
	if c.UnderlayAddr != "" && len(c.Legs) == 0 {
		paths = append(paths, PathUnderlay)
	}
	var out []Spec
	for _, dir := range []string{Upload, Download} {
		for _, n := range streams {
			for _, p := range paths {
				out = append(out, Spec{Path: p, Direction: dir, Streams: n})
			}
			out = append(out, hopSpecs(c, dir, n)...)
		}
	}
	if c.UDPMbit > 0 {
		for _, dir := range []string{Upload, Download} {
			out = append(out, Spec{Path: PathTunnel, Direction: dir, Streams: 1, UDPMbit: c.UDPMbit})
		}
	}
	return out
}

// Normalize fills in defaults: 10 s runs after 3 s of warm-up, 4 parallel
// streams; --quick makes them 3 s after 1 s.
func (c *Config) Normalize() {
	if c.Quick {
		if c.Omit == 0 {
			c.Omit = 1
		}
		if c.Seconds == 0 {
			c.Seconds = 3
		}
	}
	if c.Omit == 0 {
		c.Omit = 3
	}
	if c.Seconds == 0 {
		c.Seconds = 10
	}
	if c.Parallel == 0 {
		c.Parallel = 4
	}
	if c.Hops == 0 {
		c.Hops = 1
	}
	if c.Samples <= 0 {
		c.Samples = DefaultSamples
	}
}

// Measure runs every planned test, then analyses them. A run that fails
// because the server cannot be reached ends the bench with that error; the
// report so far is returned with it.
func Measure(ctx context.Context, c Config) (*Report, error) {
	c.Normalize()
	start := time.Now()
	rep := &Report{Client: target.Of(c.Client), Server: target.Of(c.Server), TunnelAddr: c.TunnelAddr, UnderlayAddr: c.UnderlayAddr,
		ClientInterface: c.ClientInterface, ServerInterface: c.ServerInterface, Hops: c.Hops, Omit: c.Omit, Seconds: c.Seconds}
	rep.Via = c.via()
	for _, t := range append([]target.Target{c.Client, c.Server}, c.hubs()...) {
		if err := iperf.Check(ctx, t); err != nil {
			return rep, err
		}
	}
	samplers := openSamplers(ctx, c)
	defer samplers.Close()
	// Read at the end: a remote sampler that stopped answering says so there.
	defer func() { rep.KernelDrops = samplers.statuses() }()
	// The round trip idle, before any run loads the path (latencyprobe.go).
	pings := newPinger(c)
	tcp := newTCPReader(c)
	rep.ClientUplink, rep.ServerUplink = uplinks(ctx, c)
	rep.IdleLatency = pings.pair(ctx, idlePings)
	plan := Plan(c)
	var last *endSamples // the samples after the run before, if one ran just before
	for i, spec := range plan {
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "[%d/%d] %s (%ds)... ", i+1, len(plan), spec, c.Omit+c.Seconds)
		}
		if spec.Path == PathUnderlay && rep.UnderlayBlocked != "" {
			if c.Progress != nil {
				fmt.Fprintln(c.Progress, "skipped: the underlay baseline is blocked")
			}
			continue
		}
		run, after, err := measure(ctx, c, spec, samplers, pings, tcp, last)
		last = after
		if blocked := underlayBlocked(spec, err); blocked != "" {
			// A far end that lets only WireGuard's port in (a NAT's one
			// forward, a firewall) blocks the baseline, not the tunnel.
			if c.Progress != nil {
				fmt.Fprintln(c.Progress, "blocked")
			}
			rep.UnderlayBlocked = blocked
			continue
		}
		if err != nil {
			if c.Progress != nil {
				fmt.Fprintln(c.Progress, "failed")
			}
			rep.Elapsed = time.Since(start).Seconds()
			return rep, err
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "%.1f Mbit/s\n", run.Result.Mbit())
		}
		if c.IperfJSONDir != "" {
			if run.IperfJSON, err = writeIperfJSON(c.IperfJSONDir, i+1, spec, run.Result.Raw); err != nil {
				rep.Elapsed = time.Since(start).Seconds()
				return rep, err
			}
		}
		rep.Runs = append(rep.Runs, run)
	}
	Analyze(rep)
	if err := repeatUnsettled(ctx, c, rep, len(plan), samplers, pings, tcp, last); err != nil {
		rep.Elapsed = time.Since(start).Seconds()
		return rep, err
	}
	if len(c.Clients) > 0 {
		var err error
		if rep.Clients, err = MeasureClients(ctx, c); err != nil {
			rep.Elapsed = time.Since(start).Seconds()
			return rep, err
		}
	}
	rep.Elapsed = time.Since(start).Seconds()
	return rep, nil
}

// repeatUnsettled runs the unsettled cells again, tunnel and underlay side
// by side, until each is settled or has c.Samples samples. A repeat that
// fails ends the repeats: the samples so far stand, and only a cancelled
// context is an error.
func repeatUnsettled(ctx context.Context, c Config, rep *Report, n int, samplers *endSamplers, pings *pinger, tcp *tcpReader, last *endSamples) error {
	for round := 1; round < c.Samples; round++ {
		specs := unsettledSpecs(rep, c.Samples)
		if len(specs) == 0 {
			return nil
		}
		for _, spec := range specs {
			n++
			if c.Progress != nil {
				fmt.Fprintf(c.Progress, "[again] %s (%ds): %s... ", spec.Spec, c.Omit+c.Seconds, spec.why)
			}
			run, after, err := measure(ctx, c, spec.Spec, samplers, pings, tcp, last)
			last = after
			if err != nil {
				if c.Progress != nil {
					fmt.Fprintln(c.Progress, "failed")
				}
				return ctx.Err()
			}
			if c.Progress != nil {
				fmt.Fprintf(c.Progress, "%.1f Mbit/s\n", run.Result.Mbit())
			}
			if c.IperfJSONDir != "" {
				if run.IperfJSON, err = writeIperfJSON(c.IperfJSONDir, n, spec.Spec, run.Result.Raw); err != nil {
					return err
				}
			}
			addRepeat(rep, run)
		}
		Analyze(rep)
	}
	return nil
}

// endSamples are both ends' counters at one moment.
type endSamples struct{ client, server Sample }

// measure runs one test between counter samples of both ends, and returns
// the samples after it. The samples before are before, when the run just
// before left them (nothing ran in between): in a slow guest a sample of
// both ends costs about two seconds a run.
func measure(ctx context.Context, c Config, spec Spec, samplers *endSamplers, pings *pinger, tcp *tcpReader, before *endSamples) (Run, *endSamples, error) {
	if spec.Hop > 0 {
		run, err := measureHop(ctx, c, spec)
		return run, nil, err
	}
	addr := c.TunnelAddr
	if spec.Path == PathUnderlay {
		addr = c.UnderlayAddr
	}
	run := Run{Spec: spec, Addr: addr}
	test := iperf.Test{Addr: addr, Port: c.Port, Seconds: c.Seconds, Omit: c.Omit, Reverse: spec.Direction == Download,
		Parallel: spec.Streams, UDPMbit: spec.UDPMbit, Timeout: c.Timeout, Checked: true} // Measure checked both ends
	if spec.Path == PathUnderlay && c.UnderlayPort > 0 {
		test.Port = c.UnderlayPort
	}
	if spec.UDPMbit > 0 {
		test.Omit = 0 // UDP has no window to warm up
	}
	if before == nil {
		before = takeSamples(ctx, c.Client, c.Server, Baseline)
	}
	hubs := c.hubsDuring(ctx, spec)
	dropsBefore := samplers.snapshot(ctx)
	waitPings, abortPings := pings.duringRun(ctx, test.Omit, test.Seconds)
	waitTCP := func() *TCPState { return nil }
	if tcp != nil && spec.Path == PathTunnel && spec.UDPMbit == 0 {
		waitTCP = tcp.duringRun(ctx, test.Port, test.Omit, test.Seconds)
	}
	res, err := iperf.Run(ctx, c.Client, c.Server, test)
	tcpState := waitTCP()
	if err != nil {
		abortPings()
		return run, nil, err
	}
	run.Result = res
	run.TCP = tcpState
	run.Latency = waitPings()
	samplers.record(&run, dropsBefore, samplers.snapshot(ctx))
	after := takeSamples(ctx, c.Client, c.Server, Named)
	run.Client = Delta(End{target.Of(c.Client), c.ClientInterface, c.ClientPort}, before.client, after.client)
	run.Server = Delta(End{target.Of(c.Server), c.ServerInterface, c.ServerPort}, before.server, after.server)
	run.Hubs = hubs.after(ctx)
	return run, after, nil
}

// takeSamples samples both ends at once: a sample is a handful of reads and
// commands per host (over ssh, as many round trips), and the ends do not wait
// for each other.
func takeSamples(ctx context.Context, client, server target.Target, named bool) *endSamples {
	var s endSamples
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.server = TakeSample(ctx, server, named)
	}()
	s.client = TakeSample(ctx, client, named)
	<-done
	return &s
}

// writeIperfJSON keeps one run's iperf3 -J document in dir.
func writeIperfJSON(dir string, n int, spec Spec, raw []byte) (string, error) {
	path := spec.Path
	if spec.Hop > 0 {
		path += fmt.Sprintf("-hop%d", spec.Hop) // --via: a hop's own underlay
	}
	name := fmt.Sprintf("%02d-%s-%s-%dstreams", n, path, spec.Direction, spec.Streams)
	if spec.UDPMbit > 0 {
		name += "-udp"
	}
	f, err := outfile.CreateIn(dir, name+".json", 0o644)
	if err != nil {
		return "", fmt.Errorf("--iperf3-json %v", err)
	}
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("--iperf3-json: %v", err)
	}
	return filepath.Join(dir, name+".json"), nil
}
