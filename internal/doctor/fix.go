package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// FixOutcome is what --fix did: the remedy of the top cause, applied the way
// "wgperf fix --apply --verify --confirm" applies it — on the verdict's host
// and, when the same remedy is critical on the other end too (a WireGuard MTU
// both ends must lower), there as well — and the bench again.
type FixOutcome struct {
	Host    target.Spec `json:"host"` // the verdict's host and finding
	ID      finding.ID  `json:"id"`
	Steps   []FixStep   `json:"steps"`
	Applied bool        `json:"applied"`   // every step was applied
	Kept    bool        `json:"kept"`      // and --verify kept each
	Confirm bool        `json:"confirmed"` // doctor confirmed them (the hosts answered a bench after the change)
	Before  Measured    `json:"before"`
	After   *Measured   `json:"after,omitempty"`
	// AfterBench is the full bench after the fix.
	AfterBench *bench.Report `json:"after_bench,omitempty"`
	Note       string        `json:"note,omitempty"`
}

// FixStep is the fix applied on one host.
type FixStep struct {
	Host    target.Spec  `json:"host"`
	IDs     []finding.ID `json:"ids"`
	Applied bool         `json:"applied"`
	Kept    bool         `json:"kept"`
	Journal *fix.Journal `json:"journal,omitempty"`
	Error   string       `json:"error,omitempty"`
	Note    string       `json:"note,omitempty"`
	// Confirmed: kept for good (after its verification, or the bench after all steps).
	Confirmed bool `json:"confirmed"`
	// Half is "far" or "near" for a step of a fix whose two halves go
	// together (the catalog's BothEnds), "" otherwise.
	Half      string `json:"half,omitempty"`
	env       *fix.Env
	confirmed bool
}

// fixSteps picks what --fix applies: the verdict on its host, plus every
// critical cause with an automatic fix of the same kind (a WireGuard MTU, an
// MSS clamp), on any host; one step per host, the verdict's first. It is pure.
func fixSteps(v Cause, causes []Cause) []FixStep {
	if doctorOf(v.Finding.ID).BothEnds {
		return bothEndsSteps(v, causes)
	}
	kinds := map[string]bool{}
	for _, f := range v.Finding.Fixes {
		if f.Action != nil {
			kinds[f.Action.Kind] = true
		}
	}
	steps := []FixStep{{Host: v.Finding.Host, IDs: []finding.ID{v.Finding.ID}}}
	for _, c := range causes {
		if c.Command == "" || c.Finding.Severity != finding.Critical {
			continue
		}
		if !slices.ContainsFunc(c.Finding.Fixes, func(f finding.Fix) bool { return f.Action != nil && kinds[f.Action.Kind] }) {
			continue
		}
		i := slices.IndexFunc(steps, func(s FixStep) bool { return s.Host.Same(c.Finding.Host) })
		if i < 0 {
			steps = append(steps, FixStep{Host: c.Finding.Host})
			i = len(steps) - 1
		}
		if !slices.Contains(steps[i].IDs, c.Finding.ID) {
			steps[i].IDs = append(steps[i].IDs, c.Finding.ID)
		}
	}
	return steps
}

// bothEndsSteps are the two halves of the verdict's fix, one step each: the
// host whose finding carries the entry's first remedy kind (the far end),
// then the one with its second (the near end). A half missing (no automatic
// fix on that end) leaves one step, which applyFix refuses.
func bothEndsSteps(v Cause, causes []Cause) []FixStep {
	e, _ := check.Lookup(v.Finding.ID)
	var steps []FixStep
	for i, half := range []string{"far", "near"} {
		if i >= len(e.Remedies) {
			break
		}
		// The far half is the first kind; the near half any after it (an
		// endpoint alone, or the endpoint with the near end's own port).
		kinds := []check.Remedy{e.Remedies[0]}
		if i == 1 {
			kinds = e.Remedies[1:]
		}
		isHalf := func(f finding.Fix) bool {
			return f.Action != nil && slices.ContainsFunc(kinds, func(r check.Remedy) bool { return r.Kind == f.Action.Kind })
		}
		for _, c := range causes {
			if c.Command == "" || c.Finding.ID != v.Finding.ID || !slices.ContainsFunc(c.Finding.Fixes, isHalf) {
				continue
			}
			steps = append(steps, FixStep{Host: c.Finding.Host, IDs: []finding.ID{c.Finding.ID}, Half: half})
			break
		}
	}
	return steps
}

// applyFix applies the verdict's remedy with a confirm window and
// verification, benches again, and confirms each change once a measurement
// through the tunnel succeeded after it (its verification, or the bench after
// all steps): that is what the window guards (a change that cuts the
// session). A change that did not improve the figure was already rolled back
// by fix.Apply, and stops further steps.
func (r *Report) applyFix(ctx context.Context, c *Config) {
	v := r.Verdict()
	if v == nil {
		r.NotJudged = append(r.NotJudged, "--fix: nothing to fix")
		return
	}
	out := &FixOutcome{Host: v.Finding.Host, ID: v.Finding.ID, Before: r.Measured, Steps: []FixStep{}}
	r.Fix = out
	if v.Command == "" {
		out.Note = "no automatic fix for " + string(v.Finding.ID) + "; follow its fixes by hand"
		return
	}
	if r.peerOf(v.Finding.Host).IsZero() {
		out.Note = "--fix needs --server: the fix is kept only if a measurement to the other end improves"
		return
	}
	confirm := c.Confirm
	if confirm <= 0 {
		confirm = DefaultConfirm
	}
	out.Applied, out.Kept = true, true
	// Doctor's bench (and path MTU search) is the first step's "before", and
	// each step's verified "after" the next one's: nothing changes between.
	var now *tunnelNow
	if t := r.Bench.Throughput(); r.Bench.TunnelMeasured() && r.Measured.Benched {
		now = &tunnelNow{tunnel: t, source: "doctor's bench"}
	}
	steps := fixSteps(*v, r.Causes)
	if doctorOf(v.Finding.ID).BothEnds {
		if len(steps) != 2 || steps[0].Host.Same(steps[1].Host) {
			out.Applied, out.Kept = false, false
			out.Note = "the fix of " + string(v.Finding.ID) + " has two halves, one on each end, and not both have an automatic fix: apply both by hand, at once"
			return
		}
		now = r.applyBothEnds(ctx, c, &steps[0], &steps[1], confirm, now)
		out.Steps = append(out.Steps, steps...)
		out.Applied = steps[0].Applied && steps[1].Applied
		out.Kept = steps[0].Kept && steps[1].Kept
		if !out.Applied || !out.Kept {
			out.Note = "both ends or neither: the near end's half was not applied and kept, so the far end's was rolled back too"
			if !steps[0].Applied {
				out.Note = "both ends or neither: the far end's half was not applied, so the near end's was not tried"
			}
			return
		}
	}
	for _, st := range steps {
		if st.Half != "" {
			break // applied above, as one
		}
		now = r.applyStep(ctx, c, &st, confirm, now)
		out.Steps = append(out.Steps, st)
		out.Applied = out.Applied && st.Applied
		out.Kept = out.Kept && st.Kept
		if !st.Applied || !st.Kept {
			break
		}
	}
	if !out.Applied || !out.Kept {
		out.Note = "not every step was applied and kept: the rest was not tried"
		if !slices.ContainsFunc(out.Steps, func(s FixStep) bool { return s.Applied && s.Kept }) {
			return
		}
	}
	c.progress("fix: benching again")
	bc := r.benchConfig(c)
	bc.Progress = progressWriter(c.Progress)
	after, err := bench.Measure(ctx, bc)
	m := r.Measured
	m.Stalled = errors.Is(err, iperf.ErrStalled)
	m.Throughput = after.Throughput()
	out.After, out.AfterBench = &m, after
	if err != nil {
		out.Note = fmt.Sprintf("the bench after the fix failed (%v): changes not yet confirmed are rolled back on their hosts when the %s window ends", err, confirm)
		for i := range out.Steps {
			out.Steps[i].Confirmed = out.Steps[i].confirmed
		}
		return
	}
	out.Confirm = true
	for i := range out.Steps {
		st := &out.Steps[i]
		if st.Applied && st.Kept && st.env != nil && !st.confirmed {
			if _, err := fix.Confirm(ctx, st.env); err != nil {
				st.Error = "confirm: " + err.Error()
			} else {
				st.confirmed = true
			}
		}
		st.Confirmed = st.confirmed || (st.Applied && st.env == nil) // already in place: nothing to confirm
		out.Confirm = out.Confirm && st.Confirmed
	}
}

// tunnelNow is the tunnel as last measured, from doctor's client: one
// stream up and down.
type tunnelNow struct {
	tunnel bench.Throughput
	source string
}

// prior is now as seen from host, for its step's verification.
func (r *Report) prior(now *tunnelNow, host target.Spec) *verify.Prior {
	if now == nil {
		return nil
	}
	p := &verify.Prior{Tunnel: now.tunnel, Source: "from " + now.source}
	if !host.Same(r.Client) {
		p.Tunnel = now.tunnel.Reversed()
	} else if now.source == "doctor's bench" && !r.mtuFromServer {
		p.MTU = ProbeResult[*mtu.Result](r, mtu.Def) // doctor's path MTU search ran from its client
	}
	return p
}

// applyStep applies one host's fixes, verified against the other end, and
// returns the tunnel as its verification left it (nil when unknown).
func (r *Report) applyStep(ctx context.Context, c *Config, st *FixStep, confirm time.Duration, now *tunnelNow) *tunnelNow {
	req, record, err := r.stepRequest(ctx, c, st, confirm, now, true)
	if err != nil {
		st.Error = err.Error()
		return nil
	}
	res, err := fix.Run(ctx, req)
	return r.stepDone(st, res, err, record, now)
}

// applyBothEnds applies the two halves of a BothEnds fix as one
// (fix.RunBothEnds): the far end's with its confirm window and no
// verification of its own, since the tunnel is cut until the near end
// follows; the near end's verified through the tunnel against the
// measurement before either. When the near end's fails or is not kept, the
// far end's is rolled back too, and both steps say so.
func (r *Report) applyBothEnds(ctx context.Context, c *Config, far, near *FixStep, confirm time.Duration, now *tunnelNow) *tunnelNow {
	farReq, _, err := r.stepRequest(ctx, c, far, confirm, now, false)
	if err != nil {
		far.Error = err.Error()
		return nil
	}
	nearReq, record, err := r.stepRequest(ctx, c, near, confirm, now, true)
	if err != nil {
		near.Error = err.Error()
		return nil
	}
	c.progress("fix: %s has two halves, applied as one: %s first (no measurement until %s follows), then %s", finding.JoinIDs(far.IDs, ", "), far.Host, near.Host, near.Host)
	res, err := fix.RunBothEnds(ctx, farReq, nearReq)
	if !res.NearTried {
		r.stepDone(far, res.Far, err, nil, now)
		return nil
	}
	r.stepDone(far, res.Far, nil, nil, now)
	after := r.stepDone(near, res.Near, err, record, now)
	switch {
	case res.FarRolledBack:
		far.Kept, far.env = false, nil
		far.Note = "rolled back with the near end's half on " + near.Host.String() + ": both ends or neither"
	case res.FarConfirmed:
		far.confirmed = true
		far.Note = "confirmed once the measurement through the tunnel after the near end's half kept both"
	}
	return after
}

// stepRequest is the fix.Request of one host's step: its findings, a
// confirm window, and with verified a measurement through the tunnel from
// it (unless the fix is one the bench cannot see).
func (r *Report) stepRequest(ctx context.Context, c *Config, st *FixStep, confirm time.Duration, now *tunnelNow, verified bool) (fix.Request, *verify.Record, error) {
	host, peer := c.targetOf(st.Host), c.targetOf(r.peerOf(st.Host))
	if host == nil || peer == nil {
		return fix.Request{}, nil, fmt.Errorf("fix: %s is not one end of the bench", st.Host)
	}
	record := &verify.Record{}
	req := fix.Request{Host: fix.Host{T: host, Root: c.FixRoot}, Findings: r.findingsOn(st.Host), Only: st.IDs, Apply: true, Confirm: confirm,
		ConfirmKept: true, Progress: c.Progress}
	if !verified {
		c.progress("fix: applying %s on %s (rolled back unless confirmed within %s)", finding.JoinIDs(st.IDs, ", "), host, confirm)
		return req, record, nil
	}
	req.Verify = func(ctx context.Context, p *fix.Plan) (m fix.Measure, err error) {
		// A fix the bench cannot see improving is kept on the confirm window alone.
		if !slices.ContainsFunc(st.IDs, unmeasured) {
			vc := verify.Config{Host: host, Peer: peer, Seconds: c.Seconds, Port: c.Port, Progress: progressWriter(c.Progress),
				Record: record, Prior: r.prior(now, st.Host)}
			if m, err = verify.New(ctx, p, vc); err != nil {
				return nil, fmt.Errorf("verify: %w", err)
			}
		}
		c.progress("fix: applying %s on %s (verified, rolled back unless confirmed within %s)", finding.JoinIDs(st.IDs, ", "), host, confirm)
		return m, nil
	}
	return req, record, nil
}

// stepDone records what fix.Run did on a step's host and returns the
// tunnel as its verification left it (nil when unknown).
func (r *Report) stepDone(st *FixStep, res *fix.Outcome, err error, record *verify.Record, now *tunnelNow) *tunnelNow {
	if res != nil {
		st.Journal = res.Journal
	}
	switch {
	case err != nil:
		st.Error = err.Error()
		return nil
	case res.Journal == nil:
		st.Applied, st.Kept, st.Note = true, true, "every change is already in place"
		return now
	}
	j := res.Journal
	st.Applied, st.env = true, res.Env
	st.Kept = j.Verify == nil || j.Verify.Kept
	if !st.Kept {
		st.Note = "it did not improve the tunnel's throughput: every change was rolled back"
		return nil
	}
	// A verification measured through the tunnel after the change: the host
	// answers, which is what the window guards, and Run confirmed it. That
	// also lets the next host's fix start (one open fix per journal).
	st.confirmed = res.Confirmed
	if record == nil {
		return nil
	}
	last, ok := record.Last()
	if !ok {
		return nil // changed, not measured: the next step measures its own "before"
	}
	if !st.Host.Same(r.Client) {
		last = last.Reversed()
	}
	return &tunnelNow{tunnel: last, source: "the verification after " + finding.JoinIDs(st.IDs, ", ") + " on " + st.Host.String()}
}

// progressWriter turns a line callback into the io.Writer the probes print
// progress to (they write a line in pieces); nil stays nil.
func progressWriter(f func(string)) io.Writer {
	if f == nil {
		return nil
	}
	return &lineWriter{f: f}
}

type lineWriter struct {
	f   func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.f(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// Remaining is what the exit status judges: with a fix that was applied,
// kept and confirmed, the findings its steps fixed drop out, and so do the
// throughput symptoms when the bench after it measured the tunnel healthy
// both ways; otherwise every finding of the diagnosis stands.
func (r *Report) Remaining() []finding.Finding {
	f := r.Fix
	if f == nil || !f.Applied || !f.Kept || !f.Confirm || f.After == nil {
		return r.Findings
	}
	type fixedKey struct {
		host target.Key
		id   finding.ID
	}
	fixed := map[fixedKey]bool{}
	for _, st := range f.Steps {
		for _, id := range st.IDs {
			fixed[fixedKey{st.Host.Key(), id}] = true
		}
	}
	healthyAfter := Healthy(nil, *f.After)
	out := []finding.Finding{}
	for _, x := range r.Findings {
		if fixed[fixedKey{x.Host.Key(), x.ID}] || (healthyAfter && Symptom(x.ID)) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// targetOf is the open Target of host when it is one end of the bench:
// the client or the server doctor was given, never one opened again from
// the spec's text; nil for any other host.
func (c *Config) targetOf(host target.Spec) target.Target {
	for _, t := range []target.Target{c.Client, c.Server} {
		if t != nil && !host.IsZero() && target.Of(t).Same(host) {
			return t
		}
	}
	return nil
}
