package doctor

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// FixOutcome is what --fix did: the remedy of the top cause, applied the way
// "wgperf fix --apply --verify --confirm" applies it, and the bench again.
type FixOutcome struct {
	Host    string       `json:"host"`
	ID      string       `json:"id"`
	Applied bool         `json:"applied"`
	Kept    bool         `json:"kept"`      // --verify saw the figure improve
	Confirm bool         `json:"confirmed"` // doctor confirmed it (the host answered and the bench ran after it)
	Journal *fix.Journal `json:"journal,omitempty"`
	Before  Measured     `json:"before"`
	After   *Measured    `json:"after,omitempty"`
	// AfterBench is the full bench after the fix.
	AfterBench *bench.Report `json:"after_bench,omitempty"`
	Error      string        `json:"error,omitempty"`
	Note       string        `json:"note,omitempty"`
}

// applyFix applies the verdict's remedy on its host with a confirm window and
// verification, benches again, and confirms the change once the host has
// answered a full bench through the tunnel after it: that is what the
// window guards (a change that cuts the session). A change that did not
// improve the figure was already rolled back by fix.Apply.
func (r *Report) applyFix(ctx context.Context, c *Config) {
	v := r.Verdict()
	if v == nil {
		r.NotJudged = append(r.NotJudged, "--fix: nothing to fix")
		return
	}
	out := &FixOutcome{Host: v.Finding.Host, ID: v.Finding.ID, Before: r.Measured}
	r.Fix = out
	fail := func(err error) { out.Error = err.Error() }
	if v.Command == "" {
		out.Note = "no automatic fix for " + v.Finding.ID + "; follow its fixes by hand"
		return
	}
	peerSpec := r.peerOf(v.Finding.Host)
	if peerSpec == "" {
		out.Note = "--fix needs --server: the fix is kept only if a measurement to the other end improves"
		return
	}
	host, err := target.Parse(v.Finding.Host)
	if err != nil {
		fail(err)
		return
	}
	peer, err := target.Parse(peerSpec)
	if err != nil {
		fail(err)
		return
	}
	root := c.FixRoot
	if root == "" {
		root = "/"
	}
	env, err := fix.Detect(ctx, host, root)
	if err != nil {
		fail(err)
		return
	}
	var mine []finding.Finding
	for _, f := range r.Findings {
		if f.Host == v.Finding.Host {
			mine = append(mine, f)
		}
	}
	plan, err := fix.PlanFindings(ctx, env, mine, []string{v.Finding.ID})
	if err != nil {
		fail(err)
		return
	}
	if plan.Pending() == 0 {
		out.Note = "every change of this fix is already in place"
		return
	}
	var measure fix.Measure
	if !unmeasured[v.Finding.ID] {
		// A fix the bench cannot see improving is kept on the confirm window alone.
		if measure, err = verify.New(ctx, plan, verify.Config{Host: host, Peer: peer, Seconds: c.Seconds, Port: c.Port, Progress: progressWriter(c.Progress)}); err != nil {
			fail(err)
			return
		}
	}
	confirm := c.Confirm
	if confirm <= 0 {
		confirm = DefaultConfirm
	}
	c.progress("fix: applying %s on %s (verified, rolled back unless confirmed within %s)", v.Finding.ID, host, confirm)
	j, err := fix.Apply(ctx, env, plan, fix.ApplyOptions{Confirm: confirm, Verify: measure, Progress: c.Progress})
	out.Journal = j
	if err != nil {
		fail(err)
		return
	}
	out.Applied = true
	out.Kept = j.Verify == nil || j.Verify.Kept
	if !out.Kept {
		out.Note = "the fix did not improve the tunnel's throughput: every change was rolled back"
		return
	}
	c.progress("fix: benching again")
	bc := r.benchConfig(c)
	bc.Progress = progressWriter(c.Progress)
	after, err := bench.Measure(ctx, bc)
	m := r.Measured
	m.Stalled = err != nil
	m.Up, m.Down = rates(after)
	out.After, out.AfterBench = &m, after
	if err != nil {
		out.Note = fmt.Sprintf("the bench after the fix failed (%v): the change stays unconfirmed and is rolled back on the host when the %s window ends", err, confirm)
		return
	}
	if _, err := fix.Confirm(ctx, env); err != nil {
		fail(fmt.Errorf("confirm: %w", err))
		return
	}
	out.Confirm = true
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
