package fix

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
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

