// Package fix is the apply engine over remedies: it turns findings' fixes
// into a plan of remedy.Steps on one host, applies them with a journal on the
// target so they can be restored exactly — by "wgperf fix rollback", or by a
// plain-shell watchdog when a change is not confirmed in time — and verifies
// the result by measuring again.
//
// Nothing here changes a host except Apply, Rollback and the watchdog.
package fix

import (
	"context"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Action is one change wgperf knows how to make and undo: a remedy as the
// engine plans it on an Env.
type Action interface {
	Kind() string
	Describe() string // one line: what and why
	Plan(ctx context.Context, env *Env) (Step, error)
}

// Step and FileChange are the remedy's planned change; the journal stores them.
type (
	Step       = remedy.Step
	FileChange = remedy.FileChange
)

// action adapts a remedy to the engine's Env.
type action struct{ r remedy.Remedy }

func (a action) Kind() string     { return a.r.Kind() }
func (a action) Describe() string { return a.r.Describe() }
func (a action) Plan(ctx context.Context, env *Env) (Step, error) {
	return a.r.Plan(ctx, &env.Env)
}

// New builds the Action a finding's fix names, validating its params.
func New(a finding.Action) (Action, error) {
	r, err := remedy.Parse(a)
	if err != nil {
		return nil, err
	}
	return action{r}, nil
}

// Kinds lists every action kind New accepts.
func Kinds() []string { return remedy.Kinds() }
