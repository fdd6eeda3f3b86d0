package scenario

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/uplinks"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/doctor"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// measureAfter measures the tunnel after the fix against the underlay
// measured before it (before the breakage, or beside the tunnel in doctor's
// bench): no fix on the hosts changes the link under the tunnel, and two
// runs fewer per measurement keep the lab fast. A change of the path's own
// (PathFix) is measured against the underlay again.
func (r *runner) measureAfter(ctx context.Context) error {
	var err error
	if r.res.BenchAfter, r.res.After.Up.Tunnel, r.res.After.Down.Tunnel, err = r.measureTunnel(ctx, false); err != nil {
		return err
	}
	r.res.After.Up.Underlay, r.res.After.Down.Underlay = r.res.Before.Up.Underlay, r.res.Before.Down.Underlay
	if len(r.sc.PathFix) > 0 && len(r.res.Fix) > 0 {
		// The path changed: the link under the tunnel may have too (a cycling
		// link held steady), so it is measured again.
		if r.res.After.Up.Underlay, r.res.After.Down.Underlay, err = r.measureUnderlay(ctx); err != nil {
			return err
		}
	}
	r.logf("after:  %s", r.res.After)
	if len(r.res.TunnelShares) > 1 {
		var parts []string
		for i, sh := range r.res.TunnelShares {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", r.ecmpDevices()[i], sh*100))
		}
		r.logf("spread over the tunnels (their WireGuard tx counters): %s", strings.Join(parts, ", "))
	}
	return nil
}

// argv expands in a scenario command {wg} to the node's WireGuard
// interface, {peer} to its peer's public key and {rate} to the Mbit/s the
// lab's shaped uplinks run at (sized to this machine).
func (r *runner) argv(c Command) []string {
	argv := slices.Clone(c.Argv)
	for i, a := range argv {
		argv[i] = strings.NewReplacer("{wg}", r.lab.WGInterface(c.Node), "{peer}", r.peerKey(c.Node),
			"{rate}", strconv.Itoa(r.res.Sizing.RateMbit)).Replace(a)
	}
	return argv
}

// peerKey is the public key of node's peer on the first tunnel ("" for a
// node without one): a command that moves the peer's endpoint names it.
func (r *runner) peerKey(node string) string {
	if len(r.lab.Tunnels) == 0 {
		return ""
	}
	switch t := r.lab.Tunnels[0]; node {
	case "a":
		return t.KeyB
	case "b":
		return t.KeyA
	}
	return ""
}

// exec logs and runs a scenario command; step says which part of the story it is.
func (r *runner) exec(ctx context.Context, step string, c Command) error {
	argv := r.argv(c)
	r.logf("%s: %s: %s", step, c.Node, strings.Join(argv, " "))
	_, err := r.lab.Target(c.Node).Run(ctx, argv[0], argv[1:]...)
	return err
}

// workload is a probe that loads the network the way its users do rather
// than measuring it; targeted are the probes doctor must choose itself.
func workload(p Probe) bool { return p == ProbeFlows }
func targeted(p Probe) bool { return !workload(p) }

// doctor runs "wgperf doctor --client A --server B" on the broken lab and
// keeps its findings, probes, bench and verdict: the scenario proves the
// command users run, not a chain of its own.
func (r *runner) doctor(ctx context.Context) error {
	seconds := min(r.opts.Seconds, doctor.DefaultSeconds)
	if r.sc.Latency {
		// A queue CUBIC fills after HyStart left slow start early takes
		// doctor's own length to fill: kernel WireGuard in the guest under
		// TCG, bufferbloat at 2 s runs, found the 200 ms queue in one
		// direction only in 1 of 3 plays (+34 to +106 ms), at 3 s in both
		// in 3 of 3 (+53 to +134 ms), and with this in both in 2 of 2
		// plays of make test-kernel's --time 2 (+49 to +166 ms).
		seconds = doctor.DefaultSeconds
	}
	rep, err := doctor.Run(ctx, doctor.Config{
		// Doctor runs as users run it: its default bench length (shorter
		// measurements when lab run's own are shorter).
		Client: r.lab.Target("a"), Server: r.lab.Target("b"), Seconds: seconds, Via: r.via(),
		Progress: func(s string) { r.logf("doctor: %s", s) },
		Drops:    drops.ForTarget, Thorough: r.sc.Thorough, UplinkRoutes: r.sc.UplinkRoutes,
		// The routes doctor holds for a run (the tunnel over each uplink)
		// are journaled under the lab's own root, as its fixes are.
		FixRoot: r.root,
		// Two cycles per cap, not 60 s: the lab's knee cycles every 5 s.
		Sweep: shaping.Options{Short: true},
	})
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	d := &DoctorVerdict{Status: rep.Status, Seconds: rep.Seconds, Causes: []finding.ID{}}
	r.res.Doctor, r.doctorReport = d, rep
	for _, c := range rep.Causes {
		if Environment(c.Finding.ID) {
			continue // the machine's CPUs, not the case
		}
		// The verdict, as doctor prints it: none on a healthy tunnel, for
		// notes, or for a cause that cannot explain the shortfall.
		if d.First == "" && len(d.Causes) == 0 && rep.Status != doctor.StatusHealthy && c.Finding.Severity >= finding.Warning && c.CannotExplain == "" {
			d.First = c.Finding.ID
		}
		d.Causes = append(d.Causes, c.Finding.ID)
	}
	for _, p := range rep.Probes {
		summary := p.Summary
		if p.Error != "" {
			summary = "failed: " + p.Error
		}
		r.res.Probes = append(r.res.Probes, ProbeResult{Probe(p.Probe), summary})
		r.logf("doctor ran %s (%s): %s", p.Probe, p.Why, summary)
	}
	r.res.MTU, r.res.Uplinks = doctor.ProbeResult[*mtu.Result](rep, mtu.Def), rep.Uplinks
	if err := tunnelOverEachUplink(r.sc, rep.Uplinks); err != nil {
		return err
	}
	r.res.BenchBefore = rep.Bench
	r.underlayFailed = rep.Measured.UnderlayFailed
	r.res.Before.Up.Tunnel, r.res.Before.Down.Tunnel = rep.Measured.Up.Tunnel, rep.Measured.Down.Tunnel
	if r.opts.Log != nil {
		var text strings.Builder
		if err := rep.WriteText(&text); err == nil {
			r.logf("doctor says:\n    %s", strings.ReplaceAll(strings.TrimRight(text.String(), "\n"), "\n", "\n    "))
		}
	}
	r.classify(rep.Findings)
	return nil
}

// fix applies the remedy wgperf proposes for the expected finding on every host
// that reported it, the way "wgperf fix --only ID --apply" does, with the
// persistent config written under the lab's folder instead of the host's /etc.
func (r *runner) fix(ctx context.Context) error {
	if r.sc.ECMP > 1 {
		return r.fixECMP(ctx)
	}
	if r.sc.Expect == "" || !r.res.Found {
		return nil
	}
	if len(r.sc.PathFix) > 0 {
		for _, c := range r.sc.PathFix {
			if err := r.exec(ctx, "the path", c); err != nil {
				return err
			}
			r.res.Fix = append(r.res.Fix, c.Node+": "+strings.Join(r.argv(c), " "))
		}
		return nil
	}
	fixIDs := r.sc.FixIDs
	if len(fixIDs) == 0 {
		fixIDs = []finding.ID{r.sc.Expect}
	}
	byHost := map[target.Key][]finding.Finding{}
	var hosts []target.Spec
	for _, f := range r.res.Findings {
		if !slices.Contains(fixIDs, f.ID) {
			continue
		}
		if _, ok := byHost[f.Host.Key()]; !ok {
			hosts = append(hosts, f.Host)
		}
		byHost[f.Host.Key()] = append(byHost[f.Host.Key()], f)
	}
	if err := r.fixLandsOn(hosts); err != nil {
		return err
	}
	if e, _ := check.Lookup(r.sc.Expect); e.Doctor.BothEnds {
		return r.fixBothEnds(ctx, e, byHost)
	}
	for _, host := range hosts {
		t, err := host.Open()
		if err != nil {
			return err
		}
		items, _, err := fix.Select(byHost[host.Key()], nil)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return fmt.Errorf("no automatic fix for %s on %s", finding.JoinIDs(fixIDs, ", "), host)
		}
		node := r.fixTarget(t)
		req := fix.Request{Host: fix.Host{T: node, Root: r.root}, Findings: byHost[host.Key()], Apply: true}
		if e, _ := check.Lookup(r.sc.Expect); e.Doctor.Verify == catalog.Spread {
			// Measured as doctor --fix measures it: parallel flows around
			// the tunnel from the fixed host, before and after.
			peer := r.lab.Target("b")
			if target.Of(t).Same(target.Of(peer)) {
				peer = r.lab.Target("a")
			}
			req.Verify = func(ctx context.Context, p *fix.Plan) (fix.Measure, error) {
				return verify.New(ctx, p, verify.Config{Host: node, Peer: peer, Seconds: min(r.opts.Seconds, doctor.DefaultSeconds)})
			}
		}
		res, err := fix.Run(ctx, req)
		if res != nil && res.Journal != nil && res.Journal.Verify != nil {
			v := res.Journal.Verify
			r.res.Spread = v
			r.logf("fix: %s: %s before, %s after, kept %v", node, v.Before, v.After, v.Kept)
		}
		if res != nil {
			for _, it := range res.Plan.Items {
				for _, c := range it.Step.Commands {
					r.res.Fix = append(r.res.Fix, c)
					r.logf("fix: %s: %s", node, c)
				}
			}
		}
		if err != nil && r.sc.Unavailable != "" && strings.Contains(err.Error(), r.sc.Unavailable) {
			// The honest answer where the kernel lacks what the fix needs.
			r.res.Unavailable = err.Error()
			r.logf("fix: %s: %v", node, err)
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fixBothEnds applies a fix whose two halves go on the two ends (the
// catalog's BothEnds: a new listen port, the peer's endpoint moved to it)
// the way doctor --fix does, through fix.RunBothEnds: the far end's half
// (the host whose finding carries the entry's first remedy kind) first, then
// the near end's, verified through the tunnel against doctor's bench; the
// far end's is rolled back unless the near end's is kept. Each half has
// doctor's confirm window, closed once the verification kept both (the
// lab's nodes share one journal folder, where the far end's open window is
// the near end's other half, not an earlier fix left open).
func (r *runner) fixBothEnds(ctx context.Context, e check.Entry, byHost map[target.Key][]finding.Finding) error {
	// The far half is the entry's first remedy kind, the near half any after
	// it (the endpoint alone, or with the near end's own port).
	half := func(kinds []check.Remedy) (target.Spec, error) {
		for _, fs := range byHost {
			for _, f := range fs {
				if slices.ContainsFunc(f.Fixes, func(x finding.Fix) bool {
					return x.Action != nil && slices.ContainsFunc(kinds, func(k check.Remedy) bool { return k.Kind == x.Action.Kind })
				}) {
					return f.Host, nil
				}
			}
		}
		return target.Spec{}, fmt.Errorf("no automatic fix of kind %s for %s", kinds[0].Kind, e.ID)
	}
	if len(e.Remedies) < 2 {
		return fmt.Errorf("%s: a fix of both ends needs two remedy kinds, has %d", e.ID, len(e.Remedies))
	}
	var reqs [2]fix.Request
	var nodes [2]target.Target
	for i, kinds := range [][]check.Remedy{e.Remedies[:1], e.Remedies[1:]} {
		host, err := half(kinds)
		if err != nil {
			return err
		}
		t, err := host.Open()
		if err != nil {
			return err
		}
		nodes[i], reqs[i] = t, fix.Request{Host: fix.Host{T: r.fixTarget(t), Root: r.root}, Findings: byHost[host.Key()], Only: []finding.ID{e.ID}, Apply: true,
			Confirm: doctor.DefaultConfirm, ConfirmKept: true, Progress: func(s string) { r.logf("fix: %s: %s", t, s) }}
	}
	far, near := nodes[0], nodes[1]
	// The tunnel from the near end, as doctor's bench measured it from A.
	prior := &verify.Prior{Tunnel: r.res.Before.Throughput, Source: "doctor's bench"}
	if !target.Of(near).Same(target.Of(r.lab.Target("a"))) {
		prior.Tunnel = prior.Tunnel.Reversed()
	}
	reqs[1].Verify = func(ctx context.Context, p *fix.Plan) (fix.Measure, error) {
		return verify.New(ctx, p, verify.Config{Host: near, Peer: far, Seconds: min(r.opts.Seconds, doctor.DefaultSeconds), Prior: prior})
	}
	r.logf("fix: %s has two halves, applied as one: %s first, then %s", e.ID, far, near)
	out, err := fix.RunBothEnds(ctx, reqs[0], reqs[1])
	for _, o := range []*fix.Outcome{out.Far, out.Near} {
		if o == nil || o.Plan == nil {
			continue
		}
		for _, it := range o.Plan.Items {
			for _, c := range it.Step.Commands {
				r.res.Fix = append(r.res.Fix, c)
				r.logf("fix: %s: %s", o.Plan.Host, c)
			}
		}
	}
	if out.Near != nil && out.Near.Journal != nil && out.Near.Journal.Verify != nil {
		v := out.Near.Journal.Verify
		r.logf("fix: verified through the tunnel from %s: %s before, %s after, kept %v", near, v.Before, v.After, v.Kept)
	}
	if err != nil {
		return err
	}
	if out.FarRolledBack {
		return fmt.Errorf("%s: the near end's half on %s was not kept, and the far end's on %s was rolled back with it", e.ID, near, far)
	}
	if !out.FarConfirmed {
		return fmt.Errorf("%s: the far end's half on %s was not confirmed with the near end's", e.ID, far)
	}
	return nil
}

// fixLandsOn holds the hosts the fix goes to to the scenario's FixOn.
func (r *runner) fixLandsOn(hosts []target.Spec) error {
	if len(r.sc.FixOn) == 0 {
		return nil
	}
	var want []target.Spec
	for _, n := range r.sc.FixOn {
		want = append(want, target.Of(r.lab.Target(n)))
	}
	in := func(list []target.Spec) func(target.Spec) bool {
		return func(h target.Spec) bool { return slices.ContainsFunc(list, h.Same) }
	}
	if len(hosts) != len(want) || !all(hosts, in(want)) || !all(want, in(hosts)) {
		return fmt.Errorf("the fix landed on %s, want %s", joinSpecs(hosts), joinSpecs(want))
	}
	return nil
}

// all reports whether every host passes ok.
func all(hosts []target.Spec, ok func(target.Spec) bool) bool {
	return !slices.ContainsFunc(hosts, func(h target.Spec) bool { return !ok(h) })
}

// joinSpecs names hosts in sorted order: "netns:a and netns:b".
func joinSpecs(hosts []target.Spec) string {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.String()
	}
	slices.Sort(names)
	return strings.Join(names, " and ")
}

// fixTarget is the node t as the host it stands for: the sysctls a child
// namespace only mirrors (net.core.rmem_*, nf_conntrack_max) that the
// scenario set on the machine are written there, as a real host would set
// them, and everything else of the fix (what makes the change reach the
// node's running tunnel) runs on the node. Run restores those values
// afterwards.
func (r *runner) fixTarget(t target.Target) target.Target {
	mirrors := map[string]bool{}
	for key := range r.sc.HostSysctls {
		if strings.HasPrefix(key, "net.core.") || key == "net.netfilter.nf_conntrack_max" {
			mirrors[key] = true
		}
	}
	if len(mirrors) == 0 {
		return t
	}
	return nodeWithHostSysctls{Target: t, host: target.Local(), mirrors: mirrors}
}

// doctorsUnderlay is the link under the tunnel as doctor's bench measured it
// beside the tunnel. In a direction where the underlay's own TCP collapsed
// (a black hole on the path, which doctor reports) the lab's link is the
// same as the other way's: both of R's links are shaped alike.
func (r *runner) doctorsUnderlay() (up, down float64) {
	t := r.res.BenchBefore.Throughput()
	up, down = t.Up.Underlay, t.Down.Underlay
	if slices.Contains(r.underlayFailed, bench.Upload) {
		up = down
	}
	if slices.Contains(r.underlayFailed, bench.Download) {
		down = up
	}
	return up, down
}

// fixECMP spreads the flows over the scenario's ECMP tunnels the way "wgperf
// fix ecmp --server" does, through fix.RunECMP: B's half (new tunnels to
// A's new keys), then A's (its tunnels and the multipath route), each
// journaled on its node (the lab's userspace nodes made the lab's way).
func (r *runner) fixECMP(ctx context.Context) error {
	var hosts [2]fix.Host
	for i, node := range []string{"a", "b"} {
		hosts[i] = fix.Host{T: r.fixTarget(r.lab.Target(node)), Root: r.root, WGUserspace: r.lab.NewWireGuard()}
	}
	out, err := fix.RunECMP(ctx, fix.ECMPPair{Near: hosts[0], Far: hosts[1], Interface: r.lab.WGInterface("a"), Tunnels: r.sc.ECMP,
		Apply: true, Progress: func(s string) { r.logf("fix: %s", s) }})
	if out != nil {
		for _, o := range []*fix.Outcome{out.Far, out.Near} {
			if o == nil || o.Plan == nil {
				continue
			}
			node := map[bool]string{true: "a", false: "b"}[o == out.Near]
			for _, it := range o.Plan.Items {
				for _, c := range it.Step.Commands {
					r.res.Fix = append(r.res.Fix, node+": "+c)
					r.logf("fix: %s: %s", node, c)
				}
			}
		}
	}
	return err
}

// ecmpDevices are A's tunnels the ECMP fix spreads over.
func (r *runner) ecmpDevices() []string {
	return remedy.ECMPDevices(r.lab.WGInterface("a"), r.sc.ECMP)
}

// idleAnswered begins IdleProof's line when the proof held.
const idleAnswered = "answered"

// idleProof lets the tunnel idle for Scenario.IdleProof seconds after the
// fix, longer than the case's NAT keeps a mapping, then pings B's tunnel
// address from A: only a fix that keeps the mapping open (a keepalive from
// the NATed side) gets an answer.
func (r *runner) idleProof(ctx context.Context) error {
	if r.sc.IdleProof <= 0 {
		return nil
	}
	idle := time.Duration(r.sc.IdleProof) * time.Second
	r.logf("idle: the tunnel idles %s, longer than the NAT keeps a mapping, then A pings B through it", idle)
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		return ctx.Err()
	}
	addr := r.lab.Node("b").TunnelAddr
	if _, err := r.lab.Target("a").Run(ctx, "ping", "-c", "3", "-W", "1", addr); err != nil {
		r.res.IdleProof = fmt.Sprintf("no answer from %s through the tunnel after %s idle", addr, idle)
	} else {
		r.res.IdleProof = fmt.Sprintf("%s by %s through the tunnel after %s idle", idleAnswered, addr, idle)
	}
	r.logf("idle: %s", r.res.IdleProof)
	return nil
}

// via are the scenario's hubs as doctor's --via takes them.
func (r *runner) via() []target.Target {
	var out []target.Target
	for _, n := range r.sc.Via {
		out = append(out, r.lab.Target(n))
	}
	return out
}

// tunnelOverEachUplink holds a multi-WAN play that asks for the tunnel over
// each uplink to doctor having measured it both ways on every uplink.
func tunnelOverEachUplink(sc Scenario, ups []uplinks.Uplink) error {
	if !sc.UplinkRoutes {
		return nil
	}
	if len(ups) < 2 {
		return fmt.Errorf("doctor measured %d uplinks of A, want each of the multi-WAN lab's", len(ups))
	}
	for _, u := range ups {
		if u.TunnelMbit <= 0 || u.TunnelDownMbit <= 0 {
			return fmt.Errorf("doctor did not measure the tunnel both ways over %s (%.1f up, %.1f down): %s", u.Dev, u.TunnelMbit, u.TunnelDownMbit, u.TunnelError)
		}
	}
	return nil
}
