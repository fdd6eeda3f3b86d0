package fix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// Command is "wgperf fix" on one host: where its findings come from, how
// far it goes, and how it prints.
type Command struct {
	Host Host
	// From is --from: the file the findings are read from ("" to diagnose
	// the host now); FromFindings are its findings, read by ReadFrom.
	From         string
	FromFindings []finding.Finding
	Only         []string
	Apply        bool
	Confirm      time.Duration
	Script       bool // --print-script
	// Verify, when set, measures the plan before and after (--verify).
	Verify   func(ctx context.Context, p *Plan) (Measure, error)
	JSON     bool
	Version  string // the JSON documents' wgperf_version
	Progress func(string)
}

// ErrNotKept is a verified change that did not improve its figure and was
// rolled back: the command's warning.
var ErrNotKept = errors.New("the change was not kept")

// CommandResult is what RunCommand did, for the report of its measurements.
type CommandResult struct {
	// Journal is the apply's, nil when nothing was applied.
	Journal  *Journal
	Findings []finding.Finding
}

// RunCommand is "wgperf fix": it reads the host, takes the findings (from
// the file, or the checks of the host now), plans their remedies and, with
// Apply, makes them through Run, then prints the plan, the script or what
// the apply did to out. The result says what it got to also with an error.
func RunCommand(ctx context.Context, c Command, out io.Writer) (*CommandResult, error) {
	env, err := c.Host.open(ctx)
	if err != nil {
		return nil, err
	}
	findings, err := c.findings(ctx, env)
	if err != nil {
		return nil, err
	}
	c.progress("reading the current state of " + env.T.String())
	only := make([]finding.ID, 0, len(c.Only))
	for _, id := range c.Only {
		only = append(only, finding.ID(id))
	}
	req := Request{Env: env, Findings: findings, Only: only, Apply: c.Apply, Confirm: c.Confirm, FromFile: c.From != "",
		Progress: c.Progress, Verify: c.Verify}
	res, err := Run(ctx, req)
	var missing *NoSuchFindingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("--only %w", err)
	case res == nil:
		return nil, err
	}
	plan := res.Plan
	switch {
	case c.Script:
		return nil, plan.WriteScript(out)
	case !c.Apply || plan.Pending() == 0:
		return nil, c.writePlan(out, env, plan)
	}
	result := &CommandResult{Journal: res.Journal, Findings: findings}
	if err := c.reportApply(out, env, res.Journal, err); err != nil {
		return result, err
	}
	if res.Journal.State == StateConfirming && !c.JSON {
		if HasBootHook(ctx, env) {
			fmt.Fprintf(out, "Should %s reboot before then, its boot hook (wgperf-fix-rollback) rolls every change back.\n", env.T)
		} else {
			fmt.Fprintf(out, "%s has no wgperf boot hook: should it reboot before then, the changes stay until the next wgperf fix confirm or fix rollback there rolls them back (the wgperf package installs the hook).\n", env.T)
		}
	}
	return result, nil
}

// findings are the file's findings about the host, or the checks' of the
// host now. A host without WireGuard has no tunnel to measure a fix by, and
// nothing found is not "every fix in place" (diagnose's UNKNOWN).
func (c Command) findings(ctx context.Context, env *Env) ([]finding.Finding, error) {
	if c.From != "" {
		fs, err := ForHost(c.FromFindings, target.Of(env.T))
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", c.From, err)
		}
		return fs, nil
	}
	c.progress("collecting facts from " + env.T.String())
	snap, fs, err := diagnose.Target(ctx, env.T)
	if err != nil {
		return nil, err
	}
	if worst, any := finding.Worst(fs); c.Verify != nil || !any || worst < finding.Warning {
		if err := diagnose.RequireWireGuard([]*facts.Snapshot{snap}); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

func (c Command) progress(s string) {
	if c.Progress != nil {
		c.Progress(s)
	}
}

// writePlan prints a plan that was not applied (not asked to, or nothing
// to change).
func (c Command) writePlan(out io.Writer, env *Env, plan *Plan) error {
	if c.JSON {
		return document.Write(out, document.FixPlan, c.Version, plan)
	}
	if c.Apply {
		_, err := fmt.Fprintf(out, "Nothing to change on %s: every fix is already in place.\n", env.T)
		return err
	}
	if err := plan.WriteText(out); err != nil {
		return err
	}
	if plan.Pending() == 0 {
		return nil
	}
	only := ""
	if len(c.Only) > 0 {
		only = " --only " + strings.Join(c.Only, ",")
	}
	_, err := fmt.Fprintf(out, "\nNothing was changed. To apply: wgperf fix --host %s%s --apply [--confirm 60s]\n", env.T, only)
	return err
}

// reportApply prints what an apply did and returns its outcome: err when it
// failed, ErrNotKept when the verification rolled it back.
func (c Command) reportApply(out io.Writer, env *Env, j *Journal, err error) error {
	if err != nil {
		if j != nil {
			_ = c.WriteJournal(out, j, "")
		}
		return err
	}
	if j.Verify != nil && !j.Verify.Kept {
		msg := fmt.Sprintf("Fix %s did not improve %s on %s: every change was rolled back.", j.ID, j.Verify.Before.Name, j.Host)
		if err := c.WriteJournal(out, j, msg); err != nil {
			return err
		}
		return ErrNotKept
	}
	msg := fmt.Sprintf("Applied fix %s on %s. Undo with: wgperf fix rollback --host %s", j.ID, j.Host, env.T)
	if c.Confirm > 0 {
		msg = fmt.Sprintf("Applied fix %s on %s. Run within %s:\n  wgperf fix confirm --host %s\nor every change is rolled back on the host by itself.",
			j.ID, j.Host, c.Confirm, env.T)
	}
	return c.WriteJournal(out, j, msg)
}

// WriteJournal reports what an apply, confirm or rollback did, then msg:
// as text, or the journal as JSON.
func (c Command) WriteJournal(w io.Writer, j *Journal, msg string) error {
	if c.JSON {
		return document.Write(w, document.FixJournal, c.Version, j)
	}
	if err := j.WriteText(w); err != nil || msg == "" {
		return err
	}
	_, err := fmt.Fprintln(w, msg)
	return err
}

// RunConfirm is "wgperf fix confirm": it keeps the changes of the fix
// applied on the host with a confirm window.
func (c Command) RunConfirm(ctx context.Context, out io.Writer) error {
	env, err := c.Host.open(ctx)
	if err != nil {
		return err
	}
	j, err := Confirm(ctx, env)
	if err != nil {
		return err
	}
	return c.WriteJournal(out, j, fmt.Sprintf("Confirmed fix %s on %s: the changes stay.", j.ID, j.Host))
}

// RunRollback is "wgperf fix rollback": it restores the state before the
// host's last applied fix.
func (c Command) RunRollback(ctx context.Context, out io.Writer) error {
	env, err := c.Host.open(ctx)
	if err != nil {
		return err
	}
	j, err := Rollback(ctx, env)
	if j == nil {
		return err
	}
	if perr := c.WriteJournal(out, j, fmt.Sprintf("Rolled back fix %s on %s.", j.ID, j.Host)); perr != nil {
		return perr
	}
	if err != nil {
		return fmt.Errorf("rollback incomplete: %v", err)
	}
	return nil
}

// RunRollbackUnconfirmed is "wgperf fix rollback --unconfirmed", the boot
// hook: one report per fix it rolled back, nothing when there was none.
func (c Command) RunRollbackUnconfirmed(ctx context.Context, out io.Writer) error {
	if c.JSON {
		return errors.New("--unconfirmed prints text only (run at boot, its lines go to the system log)")
	}
	env, err := c.Host.open(ctx)
	if err != nil {
		return err
	}
	js, err := RollbackUnconfirmed(ctx, env)
	for _, j := range js {
		msg := fmt.Sprintf("Rolled back fix %s on %s: it was applied with --confirm and never confirmed.", j.ID, j.Host)
		if perr := c.WriteJournal(out, j, msg); perr != nil {
			return perr
		}
	}
	if err != nil {
		return fmt.Errorf("rollback incomplete: %v", err)
	}
	return nil
}
