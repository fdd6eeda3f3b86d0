// Package doctor is the use case behind "wgperf doctor": one command that
// answers "why is my tunnel slow?". It collects both ends and runs every
// passive check (cross-host included), benches the tunnel against its
// underlay, decides healthy or slow, runs only the targeted probes the
// evidence calls for, ranks the causes by the throughput they explain and
// names the one fix to try first — and with Fix, applies it with
// verification and a confirm window and measures again.
//
// Run collects both ends and runs the passive checks, then plays doctor's
// plan (Plan, plansteps.go): the bench, the analyses judged against it and
// the targeted probes, each a Step that declares what it needs and what it
// may raise. Rank, Healthy and PlanProbes are pure.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/probes"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: doctor's own analyses of what its bench found: a hub's legs, the ECMP suggestion, the same small limit on the other end. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.PathHubLeg, catalog.RouteECMPSuggested, catalog.UDPRcvbufErrors}

// Kind and SchemaVersion label the JSON report.
const (
	Kind          = "doctor"
	SchemaVersion = 1
)

// Statuses of a report.
const (
	StatusHealthy  = "healthy"   // tunnel ≥ the expected share of the underlay both ways, nothing critical
	StatusSlow     = "slow"      // a direction below the threshold, a stall, or a critical cause the ratio cannot show
	StatusProblems = "problems"  // throughput fine now, but warnings that cost it under other load
	StatusUnjudged = "unjudged"  // no server: throughput not measured
	DefaultSeconds = 3           // per bench run, after 1 s of warm-up
	DefaultConfirm = time.Minute // confirm window of --fix
)

// Config is one doctor run.
type Config struct {
	Client target.Target
	// Server is the far end of the tunnel; nil runs the one-ended checks only.
	Server  target.Target
	Seconds int // per bench run (default DefaultSeconds)
	Port    int // iperf3 port (0: the default)
	// Hops is the number of WireGuard hops between the two ends (a tunnel
	// over tunnels, a hub): above 1 the tunnel is expected to carry half of
	// the underlay measured, which stands for the worst hop (0 or 1: one hop).
	Hops int
	// Via are the hubs between the two ends (--via), client side first:
	// each hop's own underlay is measured and the hubs' CPUs sampled (hops.go).
	Via []target.Target
	// UnderlayAddr and UnderlayPort, when set, are where the underlay
	// baseline's iperf3 reaches the far end instead of its endpoint address
	// and the iperf3 port: a port the far end lets in where only WireGuard's
	// is forwarded to it.
	UnderlayAddr string
	UnderlayPort int
	// Thorough runs the long run (collapse cycles) and the parallel-stream
	// run whatever the evidence says.
	Thorough bool
	// UplinkRoutes lets doctor route the tunnel's endpoint through each
	// other uplink of a multi-WAN client for a run (journaled, removed
	// after) to measure the tunnel over it; without it only raw TCP,
	// round trips and hops are measured there, and nothing is changed.
	UplinkRoutes bool
	// Sweep is how the shaping sweep holds its caps and which it prefers.
	Sweep shaping.Options
	// Fix applies the top cause's remedy (with verification and Confirm) and benches again.
	Fix     bool
	Confirm time.Duration // default DefaultConfirm
	FixRoot string        // configuration root for fixes ("" is "/"; tests use a folder)
	// Progress hears one line per step; nil for none.
	Progress func(string)
	// Drops opens a kernel drop sampler on each end for the bench (nil: none).
	Drops bench.Samplers
}

func (c *Config) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, args...))
	}
}

// ProbeRun is a targeted probe that ran.
type ProbeRun struct {
	ProbePlan
	Summary string  `json:"summary,omitempty"`
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Report is the outcome; its JSON form is "wgperf doctor --json".
type Report struct {
	Kind          string      `json:"kind"`
	SchemaVersion int         `json:"schema_version"`
	Client        target.Spec `json:"client"`
	Server        target.Spec `json:"server,omitzero"`
	Status        string      `json:"status"`
	// Threshold says which expectation judged the ratio.
	Threshold string   `json:"threshold"`
	Measured  Measured `json:"measured"`
	// Causes are the findings that explain slowness, most throughput first;
	// Causes[0] is the verdict.
	Causes   []Cause           `json:"causes"`
	Findings []finding.Finding `json:"findings"` // every finding, symptoms included
	Skipped  []check.Skip      `json:"skipped"`
	Hosts    []diagnose.Host   `json:"hosts"`
	// NotJudged lists what could not be judged (no server, a failed probe).
	NotJudged  []string      `json:"not_judged,omitempty"`
	Probes     []ProbeRun    `json:"probes"`
	Bench      *bench.Report `json:"bench,omitempty"`
	BenchError string        `json:"bench_error,omitempty"`
	// Results are the targeted probes' results, each under its probe's
	// definition (results.go: ProbeResult reads one, SetResult keeps it); the
	// JSON has each under its definition's Report key, here.
	Results Results `json:"-"`
	// Uplinks are the client's uplinks when it has more than one, each
	// measured to the endpoint: the tunnel over it, raw TCP, the round trip
	// and the hops. Its JSON key stands among the probes' results (placed).
	Uplinks []uplinks.Uplink `json:"uplinks,omitempty"`
	// Hub is the hub the tunnel runs through, when the client holds no
	// peer for the server but one that carries its address (hub.go).
	Hub *HubPath `json:"hub,omitempty"`
	// Unreachable is a bench that could not cross the tunnel at all, and
	// what both ends said about why (unreachable.go).
	Unreachable *Unreachable `json:"unreachable,omitempty"`
	Fix         *FixOutcome  `json:"fix,omitempty"`
	Seconds     float64      `json:"seconds"`

	endpoints     discover.Endpoints
	via           viaPath           // the hops and hubs of a path through hubs (--via; hops.go)
	passive       map[causeKey]bool // finding keys the passive checks produced (fix can find them again)
	mtuFromServer bool              // the path MTU search ran from the server (large packets vanish towards the client)
	watches       peerWatches       // both ends' peers, sampled through the bench (roaming.go)
	otherPeers    []finding.Finding // stale handshakes of peers other than the benched one (roaming.go)
	cfg           Config            // the run's configuration, its defaults set (Replay)
	snaps         []*facts.Snapshot // both ends as collected (Replay)
	undeclared    []string          // findings a step of the plan raised outside its Raises (step.go)
}

// Verdict is the top cause, nil when the tunnel is healthy or no warning or
// critical cause was found that can explain what was measured (a cause that
// cannot is never the verdict: cause not found).
func (r *Report) Verdict() *Cause {
	if r.Status == StatusHealthy || len(r.Causes) == 0 || r.Causes[0].Finding.Severity < finding.Warning || r.Causes[0].CannotExplain != "" {
		return nil
	}
	return &r.Causes[0]
}

// Run diagnoses the tunnel between c.Client and c.Server. It fails only when
// a host cannot be collected; a bench or probe that fails is reported in the
// report (a stalled tunnel is evidence, not an error).
func Run(ctx context.Context, c Config) (*Report, error) {
	start := time.Now()
	if c.Client == nil {
		return nil, errors.New("doctor: no client")
	}
	if c.Seconds <= 0 {
		c.Seconds = DefaultSeconds
	}
	rep := &Report{Kind: Kind, SchemaVersion: SchemaVersion, Client: target.Of(c.Client), Probes: []ProbeRun{}, passive: map[causeKey]bool{}}
	ends := []target.Target{c.Client}
	if c.Server != nil {
		rep.Server = target.Of(c.Server)
		ends = append(ends, c.Server)
	}
	defer func() { rep.Seconds = time.Since(start).Seconds() }()

	names := make([]string, len(ends))
	for i, end := range ends {
		names[i] = fmt.Sprint(end)
	}
	c.progress("collecting %s", strings.Join(names, " and "))
	snaps, err := diagnose.SnapshotsOf(ctx, ends, diagnose.Options{})
	if err != nil {
		return nil, err
	}
	// Without a WireGuard interface on an end there is no tunnel to judge:
	// one line and exit 3, not a report that judged nothing.
	if err := diagnose.RequireWireGuard(snaps); err != nil {
		return nil, err
	}
	checked := check.Run(snaps, check.Options{})
	d := diagnose.NewDiagnosis(snaps, checked)
	rep.Hosts, rep.Skipped = d.Hosts, d.Skipped
	for _, f := range checked.Findings {
		rep.passive[key(f)] = true
	}
	found := slices.Clone(checked.Findings)

	rep.Measured = Measured{Client: rep.Client, Server: rep.Server, Expected: bench.SingleHopRatio}
	rep.Threshold = fmt.Sprintf("single hop: the tunnel should carry ≥ %.0f%% of the underlay", bench.SingleHopRatio*100)
	c.viaHops()
	if c.Hops > 1 {
		rep.Measured.Expected = bench.MultiHopRatio
		rep.Threshold = fmt.Sprintf("%d WireGuard hops: the tunnel should carry ≥ %.0f%% of the underlay, measured against the worst hop's (the tuning guide's rule)",
			c.Hops, bench.MultiHopRatio*100)
	}
	rep.viaThreshold(&c)
	rep.cfg, rep.snaps = c, snaps
	// The bench, the analyses judged against it, the targeted probes the
	// evidence calls for, the long run: the plan (plansteps.go).
	p := &play{r: rep, c: &c, snaps: snaps, found: found}
	p.run(ctx, Plan())
	rep.noteLasts(ctx, &c)
	if c.Fix {
		rep.applyFix(ctx, &c)
	}
	return rep, nil
}

// judge merges the findings, ranks the causes and sets the status.
func (r *Report) judge(found []finding.Finding) {
	// The kernel's drop reasons become evidence on every finding that
	// explains them, the passive checks' and the probes' too.
	found = bench.KernelDropFindings(r.Bench, found)
	r.Findings = finding.Merge(found)
	finding.Sort(r.Findings)
	if r.Findings == nil {
		r.Findings = []finding.Finding{}
	}
	judged := r.aboutThisTunnel(r.Findings)
	r.Causes = Rank(judged, r.Measured)
	if r.Causes == nil {
		r.Causes = []Cause{}
	}
	for i := range r.Causes {
		r.Causes[i].Command = r.command(r.Causes[i].Finding)
	}
	r.Status = status(judged, r.Measured)
	if r.Unreachable != nil {
		// Nothing crosses the tunnel: the slowest it can be.
		r.Status = StatusSlow
		for i := range r.Causes {
			r.Causes[i].Gain = unreachableGain(r.Causes[i].Finding)
		}
	}
	if r.unmeasuredHub() && (r.Status == StatusHealthy || r.Status == StatusProblems) {
		// Without the legs' underlays there is no ratio to call healthy.
		r.Status = StatusUnjudged
	}
}

// status decides healthy or slow from the measurement and the findings.
func status(fs []finding.Finding, m Measured) string {
	switch {
	case !m.Benched, m.UnderlayBlocked != "":
		return StatusUnjudged
	case Healthy(fs, m):
		return StatusHealthy
	case m.Stalled, len(m.UnderlayFailed) > 0:
		return StatusSlow
	}
	for _, d := range []bench.DirRate{m.Up, m.Down} {
		if d.Underlay > 0 && d.Ratio() < m.Expected {
			return StatusSlow
		}
	}
	for _, f := range fs {
		if f.Severity == finding.Critical && hidden(f.ID) {
			return StatusSlow
		}
	}
	return StatusProblems
}

// bench finds the tunnel and runs a quick bench; a run that stalls or fails
// ends it, and that is recorded as evidence.
func (r *Report) bench(ctx context.Context, c *Config) []finding.Finding {
	c.progress("finding the tunnel between %s and %s", r.Client, r.Server)
	ep, err := r.discoverPath(ctx, c)
	if err != nil {
		r.BenchError = err.Error()
		r.Threshold = "not applied: no tunnel found to measure"
		r.NotJudged = append(r.NotJudged, "throughput: no tunnel found between the two hosts: "+err.Error())
		return nil
	}
	r.endpoints = ep
	r.Measured.Benched = true
	bc := r.benchConfig(c)
	bc.Progress = progressWriter(c.Progress)
	if ep.UnderlayAddr != "" {
		c.progress("bench: tunnel %s and underlay %s, upload and download, %d s each", ep.TunnelAddr, ep.UnderlayAddr, 1+c.Seconds)
	} else {
		c.progress("bench: tunnel %s, upload and download, %d s each (no underlay address of the server's to measure against)", ep.TunnelAddr, 1+c.Seconds)
	}
	r.watches = r.watchPeers(ctx, c)
	b, err := bench.Measure(ctx, bc)
	if b != nil && len(b.Runs) > 0 {
		r.Bench = b
		if err != nil {
			bench.Analyze(b) // Measure analyses only a finished plan
		}
	}
	stalledUnderlay := ""
	if err != nil {
		r.BenchError = err.Error()
		switch {
		case errors.Is(err, iperf.ErrStalled):
			if sp, ok := stalledSpec(bc, r.Bench); ok && sp.Path == bench.PathUnderlay {
				// The hosts' own TCP stalled: the path, evidence for the MTU probe.
				stalledUnderlay = sp.Direction
				break
			}
			// A transfer through the tunnel that never finishes is the symptom.
			r.Measured.Stalled = true
		case r.benchUnreachable(err):
			// The tunnel stopped carrying anything: why is the diagnosis (unreachable.go).
			r.NotJudged = append(r.NotJudged, "throughput: the bench stopped where the tunnel could not be crossed: "+err.Error())
		case r.Bench == nil:
			// Nothing ran (iperf3 missing, server unreachable): nothing measured.
			r.Measured.Benched = false
			r.Threshold = "not applied: the bench could not run"
			r.NotJudged = append(r.NotJudged, "throughput: the bench could not run: "+err.Error())
		default:
			r.NotJudged = append(r.NotJudged, "throughput: the bench stopped early: "+err.Error())
		}
	}
	r.Measured.Throughput = r.Bench.Throughput()
	r.Measured.UnderlayFailed = underlayFailures(r.Bench, stalledUnderlay)
	if r.Bench != nil && r.Bench.UnderlayBlocked != "" {
		r.Measured.UnderlayBlocked = r.Bench.UnderlayBlocked
		r.Threshold = blockedThreshold(r.Bench.UnderlayBlocked)
		r.NotJudged = append(r.NotJudged, blockedLine(r.Bench.UnderlayBlocked, c))
	}
	if r.Bench == nil {
		return nil
	}
	return r.Bench.Findings
}

func (r *Report) benchConfig(c *Config) bench.Config {
	bc := bench.Config{Client: c.Client, Server: c.Server, TunnelAddr: r.endpoints.TunnelAddr, UnderlayAddr: r.endpoints.UnderlayAddr,
		ClientInterface: r.endpoints.ClientInterface, ServerInterface: r.endpoints.ServerInterface,
		Quick: true, Omit: 1, Seconds: c.Seconds, Port: c.Port, Drops: c.Drops, Hops: c.Hops, UnderlayPort: c.UnderlayPort}
	if c.UnderlayAddr != "" {
		bc.UnderlayAddr = c.UnderlayAddr
	}
	bc.Legs = r.via.legs
	return bc
}

// tunnel is the benched tunnel as the probes see it.
func (r *Report) tunnel(c *Config) probes.Tunnel {
	return probes.Tunnel{Client: c.Client, Server: c.Server, Endpoints: r.endpoints, Port: c.Port}
}

func (r *Report) runICMPBurst(ctx context.Context, c *Config, p ProbePlan, _ []*facts.Snapshot) ([]finding.Finding, string, error) {
	res, err := icmpburst.Run(ctx, r.tunnel(c).ICMPBurst(p.Targets, p.Interface))
	if err != nil {
		return nil, "", err
	}
	r.SetResult(icmpburst.Def, res)
	return res.Findings, res.Summary(), nil
}

func (r *Report) runMTU(ctx context.Context, c *Config, _ ProbePlan, snaps []*facts.Snapshot) ([]finding.Finding, string, error) {
	t := r.tunnel(c)
	mc := mtu.Config{Client: c.Client, Port: c.Port}
	if c.Server != nil && r.endpoints.UnderlayAddr != "" {
		mc = t.MTU()
		// The hosts' own TCP collapsed: step the MSS outside the tunnel too,
		// from the end whose large packets vanish.
		mc.Outside = r.Measured.underlayFailed("both")
		back, err := discover.Tunnel(ctx, c.Server, c.Client)
		if err == nil {
			// Where the server pings back: the probe locates a black hole.
			mc.BackAddr, mc.BackTunnelAddr = back.UnderlayAddr, back.TunnelAddr
		}
		if err == nil && back.UnderlayAddr != "" && r.Measured.underlayFailed(bench.Download) && !r.Measured.underlayFailed(bench.Upload) {
			mc = t.Reversed(back).MTU()
			mc.BackAddr, mc.BackTunnelAddr, mc.Outside = r.endpoints.UnderlayAddr, r.endpoints.TunnelAddr, true
			r.mtuFromServer = true
		}
	} else if s := snapOf(snaps, r.Client); s != nil {
		for _, e := range s.Endpoints {
			if e.Endpoint != "" {
				mc.Addr, mc.ClientInterface = e.Endpoint, e.Interface
				break
			}
		}
	}
	if mc.Addr == "" {
		return nil, "", errors.New("no peer endpoint to probe")
	}
	if s := snapOf(snaps, target.Of(mc.Client)); s != nil {
		for _, w := range s.WireGuard {
			if w.Name == mc.ClientInterface {
				mc.Implementation = w.Implementation
			}
		}
	}
	// A tunnel that stalled is stepped through whatever the DF probes say:
	// a path that answers them with frag-needed can still lose the tunnel's
	// large packets (kernel WireGuard's fragments, dropped on the way).
	mc.MSSStep = r.Measured.Stalled || r.Measured.underlayFailed("both")
	// Traffic stalled on this path: a black hole the probe finds is why.
	mc.TrafficStalled = mc.MSSStep
	res, err := mtu.Run(ctx, mc)
	if err != nil {
		return nil, "", err
	}
	r.SetResult(mtu.Def, res)
	s := res.Summary()
	if r.mtuFromServer {
		s = "from " + res.Client.String() + ": " + s
	}
	return res.Findings, s, nil
}

// runShaping sweeps a few tbf caps (bench.CapsBelow) below the best tunnel
// rate measured; after a long run that collapsed in cycles, below the level
// it climbed to, each held for several cycles (shaping.Hold).
func (r *Report) runShaping(ctx context.Context, c *Config, _ ProbePlan, _ []*facts.Snapshot) ([]finding.Finding, string, error) {
	if lr := ProbeResult[*bench.LongRun](r, bench.LongRunDef); lr != nil && lr.Cycles.Oscillating() {
		return r.sweepKnee(ctx, c, lr)
	}
	top := max(r.Measured.Up.Tunnel, r.Measured.Down.Tunnel)
	caps := bench.CapsBelow(top)
	if len(caps) == 0 {
		return nil, "", fmt.Errorf("no tunnel rate to size the caps from (%.1f Mbit/s)", top)
	}
	sc := r.tunnel(c).Shaping(caps, c.Seconds)
	sc.Options = c.Sweep
	return r.sweep(ctx, sc)
}

// sweepKnee caps the long run's sender below the level it climbed to. The
// short form (c.Sweep.Short) compares the caps with the long run itself,
// two cycles long; the full one measures uncapped again for as long as it
// holds each cap.
func (r *Report) sweepKnee(ctx context.Context, c *Config, lr *bench.LongRun) ([]finding.Finding, string, error) {
	t := r.tunnel(c)
	if lr.Direction == bench.Download {
		back, err := discover.Tunnel(ctx, c.Server, c.Client)
		if err != nil {
			return nil, "", fmt.Errorf("the download's sender: %w", err)
		}
		t = t.Reversed(back)
	}
	sc := t.Shaping(bench.CapsBelow(lr.Cycles.HighMbit), c.Seconds)
	sc.Options = c.Sweep
	if c.Sweep.Short {
		un := shaping.Measured(0, lr.Single.Result)
		sc.Uncapped = &un
	}
	return r.sweep(ctx, sc)
}

func (r *Report) sweep(ctx context.Context, sc shaping.Config) ([]finding.Finding, string, error) {
	res, err := shaping.Run(ctx, sc)
	if err != nil {
		return nil, "", err
	}
	r.SetResult(shaping.Def, res)
	return res.Findings, res.Summary(), nil
}

func key(f finding.Finding) causeKey {
	return causeKey{f.ID, f.Host.Key(), f.Interface, f.Peer}
}

// command is the exact "wgperf fix" line for a cause with an automatic fix.
// Findings only a probe proved are not found again by fix's own collection:
// their command reads this report back (--from).
func (r *Report) command(f finding.Finding) string {
	if !slices.ContainsFunc(f.Fixes, func(x finding.Fix) bool { return x.Action != nil }) {
		return ""
	}
	if doctorOf(f.ID).BothEnds {
		// Either half alone cuts the tunnel: doctor --fix applies both as one.
		if r.peerOf(f.Host).IsZero() {
			return ""
		}
		return "wgperf doctor --client " + r.Client.String() + " --server " + r.Server.String() + " --fix"
	}
	cmd := "wgperf fix --host " + f.Host.String()
	if !r.passive[key(f)] {
		cmd += " --from doctor.json"
	}
	cmd += " --only " + string(f.ID) + " --apply"
	if peer := r.peerOf(f.Host); !peer.IsZero() && !unmeasured(f.ID) {
		cmd += " --verify --server " + peer.String()
	}
	return cmd + " --confirm 60s"
}

// peerOf is the other end of the benched pair, the zero Spec without one.
func (r *Report) peerOf(host target.Spec) target.Spec {
	switch {
	case r.Server.IsZero():
		return target.Spec{}
	case host.Same(r.Client):
		return r.Server
	case host.Same(r.Server):
		return r.Client
	}
	return target.Spec{}
}
