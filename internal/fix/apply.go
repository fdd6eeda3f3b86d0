package fix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// Confirm, when > 0, arms a watchdog on the target that rolls everything
	// back unless Confirm is called within this time.
	Confirm time.Duration
	// Verify, when set, measures before and after; the change is kept only if
	// the figure improved.
	Verify Measure
	// Progress, when set, hears one line per step.
	Progress func(string)
	// afterStep is a test hook run after each applied step.
	afterStep func(i int)
	// otherHalf is the journal of the far end's half of a fix of both ends
	// (RunBothEnds), which may await confirmation while this, the near
	// end's, applies: where the two ends share a journal folder (a lab's
	// nodes), it is not an earlier fix left open.
	otherHalf string
}

// Apply makes the plan's changes, journaling each step before it runs. A step
// that fails rolls back everything this apply did and returns the error.
func Apply(ctx context.Context, env *Env, p *Plan, opts ApplyOptions) (*Journal, error) {
	if err := refuseOpenConfirm(ctx, env, opts.otherHalf); err != nil {
		return nil, err
	}
	j := &Journal{ID: newJournalID(time.Now()), Host: target.Of(env.T), Started: time.Now().UTC(), State: StateApplying}
	for _, it := range p.Items {
		j.Entries = append(j.Entries, Entry{Findings: it.Findings, Description: it.rem.Describe(), Status: EntryPlanned})
	}
	if opts.Verify != nil {
		before, err := opts.Verify(ctx)
		if err != nil {
			return nil, fmt.Errorf("measure before: %w", err)
		}
		j.Verify = &Verification{Before: before}
	}
	if opts.Confirm > 0 {
		// With a deadline, the first save arms the watchdog before any step
		// runs: if a step cuts our session, it still fires.
		j.ConfirmBy = time.Now().Add(opts.Confirm).UTC()
	}
	if err := env.saveJournal(ctx, j); err != nil {
		return nil, err
	}
	for i, it := range p.Items {
		e := &j.Entries[i]
		st, err := it.rem.Plan(ctx, env.Env.Fresh())
		if err != nil {
			return j, abort(ctx, env, j, e, err)
		}
		e.Step = st
		if st.Done {
			e.Status = EntryAlready
			if err := env.saveJournal(ctx, j); err != nil {
				return j, err
			}
			continue
		}
		e.Status = EntryPending
		if err := env.saveJournal(ctx, j); err != nil {
			return j, err
		}
		if opts.Progress != nil {
			opts.Progress(fmt.Sprintf("applying %d/%d: %s", i+1, len(p.Items), e.Description))
		}
		if err := execute(ctx, env, st); err != nil {
			return j, abort(ctx, env, j, e, err)
		}
		e.Status = EntryApplied
		if err := env.saveJournal(ctx, j); err != nil {
			return j, err
		}
		if opts.afterStep != nil {
			opts.afterStep(i)
		}
	}
	if j.Verify != nil {
		after, err := opts.Verify(ctx)
		if err != nil {
			return j, abort(ctx, env, j, nil, fmt.Errorf("measure after: %w", err))
		}
		j.Verify.After = after
		j.Verify.Kept = after.Better(j.Verify.Before)
		if !j.Verify.Kept {
			if err := rollback(ctx, env, j); err != nil {
				return j, err
			}
			return j, nil
		}
	}
	j.State = StateApplied
	if opts.Confirm > 0 {
		j.State = StateConfirming
	}
	return j, env.saveJournal(ctx, j)
}

// abort marks e failed, rolls the journal back and reports both.
func abort(ctx context.Context, env *Env, j *Journal, e *Entry, cause error) error {
	if e != nil {
		e.Status = EntryFailed
		e.Error = cause.Error()
	}
	if err := rollback(ctx, env, j); err != nil {
		return fmt.Errorf("%v; rolling back also failed: %v", cause, err)
	}
	return fmt.Errorf("%v (rolled back every change of this run)", cause)
}

// execute writes a step's files, then runs its commands.
func execute(ctx context.Context, env *Env, st Step) error {
	for _, f := range st.Files {
		if _, err := env.Sh(ctx, "mkdir -p "+shell.Join(remedy.Dir(f.Path))); err != nil {
			return err
		}
		if err := env.T.WriteFile(ctx, f.Path, f.New, fileModeOf(f)); err != nil {
			return err
		}
	}
	for _, c := range st.Commands {
		if _, err := env.Sh(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// revertStep runs the undo lines, then puts the files back. With bestEffort
// (a step that may have been cut short) failures are ignored.
func revertStep(ctx context.Context, env *Env, st Step, bestEffort bool) error {
	var errs []error
	for _, c := range st.Undo {
		if _, err := env.Sh(ctx, c); err != nil && !bestEffort {
			errs = append(errs, err)
		}
	}
	for _, f := range st.Files {
		var err error
		if f.Existed {
			err = restoreFile(ctx, env, f)
		} else {
			_, err = env.Sh(ctx, "rm -f "+shell.Join(f.Path))
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// restoreFile writes f's previous content back; key lines the journal holds
// redacted are taken from the live file.
func restoreFile(ctx context.Context, env *Env, f FileChange) error {
	old := f.Old
	if remedy.HasRedacted(old) {
		live, err := env.T.ReadFile(ctx, f.Path)
		if err != nil {
			return fmt.Errorf("restore %s: %w", f.Path, err)
		}
		if old, err = remedy.RestoreKeys(old, live); err != nil {
			return fmt.Errorf("restore %s: %v; left as it is", f.Path, err)
		}
	}
	return env.T.WriteFile(ctx, f.Path, old, fileModeOf(f))
}

// Rollback reverts the newest journal still in effect and returns it.
func Rollback(ctx context.Context, env *Env) (*Journal, error) {
	j, err := Latest(ctx, env)
	if err != nil {
		return nil, err
	}
	return j, rollback(ctx, env, j)
}

// rollback reverts j's steps newest first, disarms its watchdog and records the result.
func rollback(ctx context.Context, env *Env, j *Journal) error {
	// Disarm first, so the watchdog does not revert a second time.
	if err := env.T.WriteFile(ctx, env.journalPath(j.ID, ".reverted"), []byte(time.Now().UTC().Format(time.RFC3339)+" by wgperf fix rollback\n"), 0o600); err != nil {
		return err
	}
	var errs []error
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := &j.Entries[i]
		switch e.Status {
		case EntryApplied, EntryPending, EntryFailed:
			if err := revertStep(ctx, env, e.Step, e.Status != EntryApplied); err != nil {
				errs = append(errs, fmt.Errorf("undo %q: %w", e.Description, err))
				continue
			}
			e.Status = EntryReverted
		}
	}
	j.State = StateRolledBack
	stopWatchdog(ctx, env, j)
	if err := env.saveJournal(ctx, j); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func fileModeOf(f FileChange) (m fsMode) {
	if f.Mode == 0 {
		return 0o644
	}
	return fsMode(f.Mode)
}

// refuseOpenConfirm stops a second apply while an earlier one awaits
// confirmation; otherHalf, when set, is a journal that may (see
// ApplyOptions), and the one before it is held to the rule instead.
func refuseOpenConfirm(ctx context.Context, env *Env, otherHalf string) error {
	ids, err := Journals(ctx, env)
	if len(ids) > 0 && ids[len(ids)-1] == otherHalf {
		ids = ids[:len(ids)-1]
	}
	if err != nil || len(ids) == 0 {
		return err
	}
	j, err := LoadJournal(ctx, env, ids[len(ids)-1])
	if err != nil {
		return err
	}
	if j.State == StateConfirming && time.Now().After(j.ConfirmBy) {
		return fmt.Errorf("%s: fix %s was not confirmed by %s and is still in place (its watchdog did not run: a reboot?): run wgperf fix rollback first",
			env.T, j.ID, j.ConfirmBy.Format(time.RFC3339))
	}
	if j.State == StateConfirming {
		return fmt.Errorf("%s: fix %s awaits confirmation: run wgperf fix confirm (or rollback) first", env.T, j.ID)
	}
	return nil
}

// awaitsConfirm reports whether j was applied with a deadline and neither
// confirmed nor rolled back: confirming, or cut while applying.
func awaitsConfirm(j *Journal) bool {
	return j.State == StateConfirming || (j.State == StateApplying && !j.ConfirmBy.IsZero())
}

// RollbackUnconfirmed rolls back, newest first, every fix on the target that
// was applied with a deadline and never confirmed, whatever the clock says,
// and returns them. It is what runs at boot (deploy/systemd,
// deploy/openwrt): a reboot ended the watchdogs, so nothing else would roll
// these back, and an unconfirmed change must not outlive its deadline.
func RollbackUnconfirmed(ctx context.Context, env *Env) ([]*Journal, error) {
	ids, err := Journals(ctx, env)
	if err != nil {
		return nil, err
	}
	var done []*Journal
	var errs []error
	for i := len(ids) - 1; i >= 0; i-- {
		j, err := LoadJournal(ctx, env, ids[i])
		if err != nil {
			// One damaged journal must not keep the others in place.
			errs = append(errs, err)
			continue
		}
		if !awaitsConfirm(j) {
			continue
		}
		if err := rollback(ctx, env, j); err != nil {
			errs = append(errs, fmt.Errorf("fix %s: %w", j.ID, err))
		}
		done = append(done, j)
	}
	return done, errors.Join(errs...)
}

// Confirm keeps the changes of the journal awaiting confirmation and stops its watchdog.
func Confirm(ctx context.Context, env *Env) (*Journal, error) {
	ids, err := Journals(ctx, env)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: nothing awaits confirmation", env.T)
	}
	j, err := LoadJournal(ctx, env, ids[len(ids)-1])
	if err != nil {
		return nil, err
	}
	return j, confirm(ctx, env, j)
}

// confirm keeps j's changes and stops its watchdog.
func confirm(ctx context.Context, env *Env, j *Journal) error {
	switch j.State {
	case StateConfirming:
	case StateRolledBack:
		return fmt.Errorf("%s: too late, fix %s was already rolled back", env.T, j.ID)
	default:
		return fmt.Errorf("%s: fix %s does not await confirmation (state %s)", env.T, j.ID, j.State)
	}
	if time.Now().After(j.ConfirmBy) {
		// The watchdog did not run (the host rebooted, or it was killed):
		// a change nobody confirmed in time does not stay.
		late := fmt.Sprintf("%s: too late, fix %s had to be confirmed by %s", env.T, j.ID, j.ConfirmBy.Format(time.RFC3339))
		if err := rollback(ctx, env, j); err != nil {
			return fmt.Errorf("%s; rolling it back failed: %v", late, err)
		}
		return fmt.Errorf("%s: rolled back every change of it", late)
	}
	if err := env.T.WriteFile(ctx, env.journalPath(j.ID, ".confirmed"), []byte("confirmed\n"), 0o600); err != nil {
		return err
	}
	// The watchdog may have fired between our read and the write above.
	if ok, err := env.Exists(ctx, env.journalPath(j.ID, ".reverted")); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%s: too late, fix %s was already rolled back", env.T, j.ID)
	}
	stopWatchdog(ctx, env, j)
	j.State = StateConfirmed
	return env.saveJournal(ctx, j)
}

// BootHookUnit is the systemd unit that runs "wgperf fix rollback
// --unconfirmed" at boot (deploy/systemd; deploy/openwrt's procd script is
// linked as /etc/rc.d/S99wgperf-fix-rollback).
const BootHookUnit = "wgperf-fix-rollback.service"

// bootHookScript exits 0 when the next boot of the host under root ($1) runs
// the boot hook, as systemd decides it and "systemctl is-enabled" reports it:
// the unit is installed and not masked in /etc, and a .wants folder of
// /etc/systemd/system links it (what systemctl enable, deb-systemd-helper
// and the rpm's "systemctl preset" make; a vendor link under /usr/lib is
// not counted, and /run's are gone at boot); or, before the host's first
// boot (no machine-id yet), the first preset line that names the unit
// enables it, since systemd applies the presets then. On OpenWrt, the rc.d link.
const bootHookScript = `r=$1; u=` + BootHookUnit + `
{ [ -L "$r/etc/rc.d/S99wgperf-fix-rollback" ] || [ -e "$r/etc/rc.d/S99wgperf-fix-rollback" ]; } && exit 0
[ "$(readlink "$r/etc/systemd/system/$u" 2>/dev/null)" = /dev/null ] && exit 1
installed=
for d in /etc/systemd/system /usr/lib/systemd/system /lib/systemd/system; do
	[ -f "$r$d/$u" ] && installed=1
done
[ -n "$installed" ] || exit 1
for l in "$r"/etc/systemd/system/*.wants/"$u"; do
	[ -L "$l" ] || [ -e "$l" ] && exit 0
done
id=$(cat "$r/etc/machine-id" 2>/dev/null)
[ -z "$id" ] || [ "$id" = uninitialized ] || exit 1
for d in /etc/systemd/system-preset /run/systemd/system-preset /usr/lib/systemd/system-preset /lib/systemd/system-preset; do
	for f in "$r$d"/*.preset; do [ -f "$f" ] && printf '%s %s\n' "${f##*/}" "$f"; done
done | sort -s -u -k1,1 | while read -r _ f; do
	while read -r verb pat _; do
		case $verb in enable|disable) ;; *) continue ;; esac
		case $u in $pat) [ "$verb" = enable ] && echo enable || echo disable; exit 0 ;; esac
	done < "$f"
done | head -n 1 | grep -qx enable`

// HasBootHook reports whether the target rolls back unconfirmed fixes at its
// next boot (bootHookScript): without the hook, a reboot before the deadline
// leaves them in place until the next "wgperf fix confirm" or "fix rollback" there.
func HasBootHook(ctx context.Context, env *Env) bool {
	root := env.Path("/")
	_, err := env.Sh(ctx, shell.Join("sh", "-c", bootHookScript, "sh", strings.TrimSuffix(root, "/")))
	return err == nil
}
