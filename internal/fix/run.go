package fix

import (
	"context"
	"fmt"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/finding"
)

// Request is one fix on one host: the findings whose remedies it plans, and
// how far it goes and how a change is kept.
type Request struct {
	// Host is where the fix goes; Run reads it first. Env, when set, is the
	// host already read, and Host is not.
	Host     Host
	Env      *Env
	Findings []finding.Finding
	// Only keeps the findings with these IDs; one that none has is a
	// *NoSuchFindingError, so a typo does not silently plan nothing.
	Only []finding.ID
	// Apply makes the planned changes; without it Run only plans.
	Apply bool
	// Confirm, when > 0, arms a watchdog on the host that rolls every change
	// back unless Confirm is called within this time.
	Confirm time.Duration
	// Verify, when set, returns how the plan is measured before and after the
	// change (nil: it is not measured); a measured change stays only if the
	// figure improved.
	Verify func(ctx context.Context, p *Plan) (Measure, error)
	// ConfirmKept confirms a change as soon as its verification kept it: the
	// measurement through the tunnel after it showed the host still answers,
	// which is what the confirm window guards.
	ConfirmKept bool
	// FromFile: the findings were read from a file (someone else's text).
	// Before anything is planned, Run collects the host's facts and holds
	// every selected finding's actions to them (Admit): only what wgperf's
	// own checks would propose on the host as it is now gets planned.
	FromFile bool
	// Progress, when set, hears one line per step.
	Progress func(string)
	// otherHalf: see ApplyOptions.
	otherHalf string
}

// Outcome is what Run did.
type Outcome struct {
	// Env is the host as Run read it (to confirm or roll back on later).
	Env  *Env
	Plan *Plan
	// Journal records the changes made; nil when none was (only planned, or
	// every change already in place).
	Journal *Journal
	// Confirmed: ConfirmKept confirmed the change.
	Confirmed bool
}

// Run reads the host (Request.Host, unless Env is already read), plans the
// remedies of the findings on it and, with Apply, makes them: measured
// before and after, journaled for rollback, within a confirm window. It is
// the one detect → plan → verify → apply → confirm flow "wgperf fix", doctor
// --fix and the lab's scenarios share. A change that failed or did
// not improve the figure has been rolled back when it returns; the Outcome
// says what it got to also with an error.
func Run(ctx context.Context, r Request) (*Outcome, error) {
	items, manual, err := Select(r.Findings, r.Only)
	if err != nil {
		return nil, err
	}
	if r.Env == nil {
		if r.Env, err = r.Host.open(ctx); err != nil {
			return nil, err
		}
	}
	if r.FromFile {
		if r.Progress != nil {
			r.Progress("reading the facts of " + r.Env.T.String() + " to hold the file's fixes to them")
		}
		if err := admitOnHost(ctx, r.Env, r.Findings, items); err != nil {
			return nil, err
		}
	}
	plan, err := MakePlan(ctx, r.Env, items, manual)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Env: r.Env, Plan: plan}
	if !r.Apply || plan.Pending() == 0 {
		return out, nil
	}
	opts := ApplyOptions{Confirm: r.Confirm, Progress: r.Progress, otherHalf: r.otherHalf}
	if r.Verify != nil {
		if opts.Verify, err = r.Verify(ctx, plan); err != nil {
			return out, err
		}
	}
	if out.Journal, err = Apply(ctx, r.Env, plan, opts); err != nil {
		return out, err
	}
	if v := out.Journal.Verify; r.ConfirmKept && v != nil && v.Kept {
		if _, err := Confirm(ctx, r.Env); err != nil {
			return out, fmt.Errorf("confirm: %w", err)
		}
		out.Confirmed = true
	}
	return out, nil
}

// PlanFindings selects the fixes of fs (only the findings with those IDs when
// only is set) and plans them on env. It changes nothing.
func PlanFindings(ctx context.Context, env *Env, fs []finding.Finding, only []finding.ID) (*Plan, error) {
	items, manual, err := Select(fs, only)
	if err != nil {
		return nil, err
	}
	return MakePlan(ctx, env, items, manual)
}

// admitOnHost collects the host's facts and admits the findings the items
// were selected from on them.
func admitOnHost(ctx context.Context, env *Env, fs []finding.Finding, items []Item) error {
	if len(items) == 0 {
		return nil
	}
	host, err := collect.Collect(ctx, env.T, collect.Options{})
	if err != nil {
		return fmt.Errorf("reading the host's facts to check the findings against: %w", err)
	}
	picked := map[finding.ID]bool{}
	for _, it := range items {
		for _, id := range it.Findings {
			picked[id] = true
		}
	}
	var sel []finding.Finding
	for _, f := range fs {
		if picked[f.ID] {
			sel = append(sel, f)
		}
	}
	if err := Admit(sel, host); err != nil {
		return fmt.Errorf("findings file: %w", err)
	}
	return nil
}

// Fixed are the findings of fs the journal's steps remedied.
func (j *Journal) Fixed(fs []finding.Finding) []finding.Finding {
	ids := map[finding.ID]bool{}
	for _, e := range j.Entries {
		for _, id := range e.Findings {
			ids[id] = true
		}
	}
	var out []finding.Finding
	for _, x := range fs {
		if ids[x.ID] {
			out = append(out, x)
		}
	}
	return out
}

// NoSuchFindingError is an ID asked for (Request.Only) that none of the
// findings has.
type NoSuchFindingError struct {
	ID    finding.ID
	Found []finding.ID // the IDs the findings have, sorted
}

func (e *NoSuchFindingError) Error() string {
	found := finding.JoinIDs(e.Found, ", ")
	if found == "" {
		found = "none"
	}
	return fmt.Sprintf("%s: no such finding on this host (found: %s)", e.ID, found)
}
