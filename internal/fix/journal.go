package fix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// JournalDir is where apply records what it changes, on the target itself, so
// a rollback works from any machine and after a crash half-way.
const JournalDir = "/var/lib/wgperf/journal"

// Journal states.
const (
	StateApplying   = "applying"    // apply started and has not finished (or crashed)
	StateApplied    = "applied"     // every step applied
	StateConfirming = "confirming"  // applied; the watchdog reverts unless confirmed by ConfirmBy
	StateConfirmed  = "confirmed"   // confirmed in time
	StateRolledBack = "rolled-back" // reverted by rollback, a failed apply or the watchdog
)

// Entry statuses.
const (
	EntryPlanned  = "planned" // not reached
	EntryAlready  = "already" // nothing to do, already in place
	EntryPending  = "pending" // saved state written, change in progress
	EntryApplied  = "applied"
	EntryFailed   = "failed"
	EntryReverted = "reverted"
)

// Journal is one apply: the steps with their previous state, written before
// each step runs and updated after.
type Journal struct {
	ID          string        `json:"id"`
	Host        string        `json:"host"`
	Started     time.Time     `json:"started"`
	State       string        `json:"state"`
	ConfirmBy   time.Time     `json:"confirm_by,omitzero"`
	WatchdogPID int           `json:"watchdog_pid,omitempty"`
	Entries     []Entry       `json:"entries"`
	Verify      *Verification `json:"verify,omitempty"`
}

// Entry is one item of a journal.
type Entry struct {
	Findings    []string `json:"findings"`
	Description string   `json:"description"`
	Status      string   `json:"status"`
	Step        Step     `json:"step"`
	Error       string   `json:"error,omitempty"`
}

func (e *Env) journalPath(id, suffix string) string {
	return e.Path(JournalDir) + "/" + id + suffix
}

func (e *Env) saveJournal(ctx context.Context, j *Journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if _, err := e.sh(ctx, "mkdir -p -m 700 "+target.Quote(e.Path(JournalDir))); err != nil {
		return err
	}
	if err := e.T.WriteFile(ctx, e.journalPath(j.ID, ".json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	if j.State == StateConfirming || j.State == StateApplying {
		// The watchdog runs this script; keep it in step with the journal.
		return e.T.WriteFile(ctx, e.journalPath(j.ID, ".revert.sh"), []byte(revertScript(e, j)), 0o700)
	}
	return nil
}

// LoadJournal reads one journal; a marker left by the watchdog means it was rolled back.
func LoadJournal(ctx context.Context, env *Env, id string) (*Journal, error) {
	b, err := env.T.ReadFile(ctx, env.journalPath(id, ".json"))
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", id, err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("journal %s is damaged: %v", id, err)
	}
	if j.State != StateRolledBack {
		if ok, err := env.exists(ctx, env.journalPath(id, ".reverted")); err != nil {
			return nil, err
		} else if ok {
			j.State = StateRolledBack
			for i := range j.Entries {
				if j.Entries[i].Status == EntryApplied || j.Entries[i].Status == EntryPending {
					j.Entries[i].Status = EntryReverted
				}
			}
		}
	}
	return &j, nil
}

// Journals lists journal IDs on the target, oldest first (IDs sort by time).
func Journals(ctx context.Context, env *Env) ([]string, error) {
	ok, err := env.exists(ctx, env.Path(JournalDir))
	if err != nil || !ok {
		return nil, err
	}
	out, err := env.T.Run(ctx, "ls", env.Path(JournalDir))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range strings.Fields(string(out)) {
		if id, ok := strings.CutSuffix(n, ".json"); ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Latest returns the newest journal that still has changes in place, or an
// error when there is none.
func Latest(ctx context.Context, env *Env) (*Journal, error) {
	ids, err := Journals(ctx, env)
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		j, err := LoadJournal(ctx, env, ids[i])
		if err != nil {
			return nil, err
		}
		if j.State != StateRolledBack {
			return j, nil
		}
	}
	return nil, fmt.Errorf("%s: no applied fix to roll back (journals in %s)", env.T, JournalDir)
}

func newJournalID(now time.Time) string {
	return now.UTC().Format("20060102T150405.000000000Z")
}

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
}

// Apply makes the plan's changes, journaling each step before it runs. A step
// that fails rolls back everything this apply did and returns the error.
func Apply(ctx context.Context, env *Env, p *Plan, opts ApplyOptions) (*Journal, error) {
	if err := refuseOpenConfirm(ctx, env); err != nil {
		return nil, err
	}
	j := &Journal{ID: newJournalID(time.Now()), Host: env.T.String(), Started: time.Now().UTC(), State: StateApplying}
	for _, it := range p.Items {
		j.Entries = append(j.Entries, Entry{Findings: it.Findings, Description: it.act.Describe(), Status: EntryPlanned})
	}
	if opts.Verify != nil {
		before, err := opts.Verify(ctx)
		if err != nil {
			return nil, fmt.Errorf("measure before: %w", err)
		}
		j.Verify = &Verification{Before: before}
	}
	if opts.Confirm > 0 {
		// Arm the watchdog first: if a step cuts our session, it still fires.
		j.ConfirmBy = time.Now().Add(opts.Confirm).UTC()
		if err := env.saveJournal(ctx, j); err != nil {
			return nil, err
		}
		pid, err := startWatchdog(ctx, env, j.ID, opts.Confirm)
		if err != nil {
			return nil, err
		}
		j.WatchdogPID = pid
	}
	if err := env.saveJournal(ctx, j); err != nil {
		return nil, err
	}
	for i, it := range p.Items {
		e := &j.Entries[i]
		st, err := it.act.Plan(ctx, env.fresh())
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
		if _, err := env.sh(ctx, "mkdir -p "+target.Quote(dir(f.Path))); err != nil {
			return err
		}
		if err := env.T.WriteFile(ctx, f.Path, f.New, fileModeOf(f)); err != nil {
			return err
		}
	}
	for _, c := range st.Commands {
		if _, err := env.sh(ctx, c); err != nil {
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
		if _, err := env.sh(ctx, c); err != nil && !bestEffort {
			errs = append(errs, err)
		}
	}
	for _, f := range st.Files {
		var err error
		if f.Existed {
			err = env.T.WriteFile(ctx, f.Path, f.Old, fileModeOf(f))
		} else {
			_, err = env.sh(ctx, "rm -f "+target.Quote(f.Path))
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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

// refuseOpenConfirm stops a second apply while an earlier one awaits confirmation.
func refuseOpenConfirm(ctx context.Context, env *Env) error {
	ids, err := Journals(ctx, env)
	if err != nil || len(ids) == 0 {
		return err
	}
	j, err := LoadJournal(ctx, env, ids[len(ids)-1])
	if err != nil {
		return err
	}
	if j.State == StateConfirming {
		return fmt.Errorf("%s: fix %s awaits confirmation: run wgperf fix confirm (or rollback) first", env.T, j.ID)
	}
	return nil
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
	switch j.State {
	case StateConfirming:
	case StateRolledBack:
		return j, fmt.Errorf("%s: too late, fix %s was already rolled back", env.T, j.ID)
	default:
		return j, fmt.Errorf("%s: fix %s does not await confirmation (state %s)", env.T, j.ID, j.State)
	}
	if err := env.T.WriteFile(ctx, env.journalPath(j.ID, ".confirmed"), []byte("confirmed\n"), 0o600); err != nil {
		return j, err
	}
	// The watchdog may have fired between our read and the write above.
	if ok, err := env.exists(ctx, env.journalPath(j.ID, ".reverted")); err != nil {
		return j, err
	} else if ok {
		return j, fmt.Errorf("%s: too late, fix %s was already rolled back", env.T, j.ID)
	}
	stopWatchdog(ctx, env, j)
	j.State = StateConfirmed
	return j, env.saveJournal(ctx, j)
}

// startWatchdog starts a detached shell on the target that sleeps, then runs
// the journal's revert script unless a confirm (or revert) marker exists. It
// is plain POSIX shell, so it works where wgperf is not installed, and it
// survives the session that started it.
func startWatchdog(ctx context.Context, env *Env, id string, after time.Duration) (int, error) {
	secs := int((after + time.Second - 1) / time.Second)
	wd := env.journalPath(id, ".watchdog.sh")
	script := fmt.Sprintf(`#!/bin/sh
# wgperf fix watchdog for %[1]s: rolls the fix back unless it is confirmed in time.
trap '' HUP
sleep %[2]d
[ -e %[3]s ] && exit 0
[ -e %[4]s ] && exit 0
sh %[5]s > %[6]s 2>&1
`, id, secs, target.Quote(env.journalPath(id, ".confirmed")), target.Quote(env.journalPath(id, ".reverted")),
		target.Quote(env.journalPath(id, ".revert.sh")), target.Quote(env.journalPath(id, ".revert.log")))
	if err := env.T.WriteFile(ctx, wd, []byte(script), 0o700); err != nil {
		return 0, err
	}
	q := target.Quote(wd)
	out, err := env.sh(ctx, "cd / && if command -v setsid >/dev/null 2>&1; then setsid sh "+q+" </dev/null >/dev/null 2>&1 & else nohup sh "+q+" </dev/null >/dev/null 2>&1 & fi; echo $!")
	if err != nil {
		return 0, fmt.Errorf("start the confirm watchdog: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("start the confirm watchdog: unexpected pid %q", out)
	}
	return pid, nil
}

// stopWatchdog ends j's watchdog (and its sleep) if it still runs; it checks
// the process is ours before signalling it.
func stopWatchdog(ctx context.Context, env *Env, j *Journal) {
	if j.WatchdogPID <= 0 {
		return
	}
	pid := strconv.Itoa(j.WatchdogPID)
	wd := target.Quote(env.journalPath(j.ID, ".watchdog.sh"))
	_, _ = env.sh(ctx, fmt.Sprintf("if grep -q %s /proc/%s/cmdline 2>/dev/null; then kill -TERM -%s 2>/dev/null || kill -TERM %s; fi", wd, pid, pid, pid))
}

// revertScript renders a journal's rollback as plain shell: the steps that may
// be in effect, newest first, then a marker that tells wgperf it ran.
func revertScript(env *Env, j *Journal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Rollback of wgperf fix %s on %s.\n", j.ID, j.Host)
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := j.Entries[i]
		if e.Status != EntryApplied && e.Status != EntryPending && e.Status != EntryFailed {
			continue
		}
		fmt.Fprintf(&b, "\n# undo: %s\n", e.Description)
		for _, c := range e.Step.Undo {
			fmt.Fprintf(&b, "{\n%s\n} || echo %s >&2\n", c, target.Quote("wgperf: undo failed: "+firstLine(c)))
		}
		for _, f := range e.Step.Files {
			if f.Existed {
				fmt.Fprintf(&b, "%s\nchmod %o %s\n", heredoc(f.Path, f.Old), fileModeOf(f), target.Quote(f.Path))
			} else {
				fmt.Fprintf(&b, "rm -f %s\n", target.Quote(f.Path))
			}
		}
	}
	fmt.Fprintf(&b, "\necho \"$(date) by the confirm watchdog\" > %s\n", target.Quote(env.journalPath(j.ID, ".reverted")))
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
