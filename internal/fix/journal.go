package fix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Where apply records what it changes, on the target itself, so a rollback
// works from any machine and after a crash half-way. Both are persistent: on
// OpenWrt /var is a link to /tmp, which anyone may write and a reboot empties
// (while uci commit changes persist), so the journal lives on the overlay.
const (
	JournalDir        = "/var/lib/wgperf/journal" // Linux
	OpenWrtJournalDir = "/etc/wgperf/journal"
)

// ErrUntrustedJournal is wrapped by every refusal to use a journal directory
// or file that someone other than root (or the user running wgperf) could
// have written: root would run the undo lines it holds.
var ErrUntrustedJournal = errors.New("untrusted journal")

// journalIDRE is the shape of newJournalID; anything else in the directory is
// not a journal (and never becomes part of a path).
var journalIDRE = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z$`)

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
	Host        target.Spec   `json:"host"`
	Started     time.Time     `json:"started"`
	State       string        `json:"state"`
	ConfirmBy   time.Time     `json:"confirm_by,omitzero"`
	WatchdogPID int           `json:"watchdog_pid,omitempty"`
	Entries     []Entry       `json:"entries"`
	Verify      *Verification `json:"verify,omitempty"`

	// armed is the revert script the running watchdog checks (by the SHA-256
	// it was given when armed).
	armed string
}

// MarshalJSON writes empty lists as [], never null.
func (j Journal) MarshalJSON() ([]byte, error) {
	type plain Journal
	p := plain(j)
	if p.Entries == nil {
		p.Entries = []Entry{}
	}
	return json.Marshal(p)
}

// Entry is one item of a journal.
type Entry struct {
	Findings    []finding.ID `json:"findings"`
	Description string       `json:"description"`
	Status      string       `json:"status"`
	Step        Step         `json:"step"`
	Error       string       `json:"error,omitempty"`
}

// journalDir is the journal directory on the target, under Root.
func (e *Env) journalDir() string {
	if e.Platform == remedy.OpenWrt {
		return e.Path(OpenWrtJournalDir)
	}
	return e.Path(JournalDir)
}

func (e *Env) journalPath(id, suffix string) string {
	return e.journalDir() + "/" + id + suffix
}

// trustScript, when asked, makes the system directory above the journal
// (/var/lib or /etc) with mkdir -p, then wgperf's two directories one level at
// a time with mkdir -m 700, which refuses an existing name, link or not, and
// never follows one; it stops at the first symbolic link. Then it prints the
// user id it runs as, why the directories from / down to the system
// directory cannot be trusted ("ok" when they can: untrustedSh) and, without
// following links, the owner, mode and type of wgperf's two directories and
// of any files named after them.
const trustScript = untrustedSh + `
create=$1; base=$2; shift 2
umask 077
if [ "$create" = 1 ]; then
	mkdir -p "$base" || exit 1
	for d in "$1" "$2"; do
		[ -L "$d" ] && break
		[ -e "$d" ] || mkdir -m 700 -- "$d" || exit 1
	done
fi
self=$(id -u)
echo "$self"
why=
[ -e "$base" ] && why=$(untrusted "$base" "$self")
echo "${why:-ok}"
for p in "$@"; do
	if [ -e "$p" ] || [ -L "$p" ]; then stat -c '%u %a %F' -- "$p"; else echo missing; fi
done`

// trustJournal checks that the journal directory, its parent (wgperf's own)
// and files are what only root (or the user running wgperf) could have made:
// real directories and regular files, not symbolic links, owned by root or
// that user, and writable by nobody else. With create it makes the
// directories first (mode 0700). It reports whether the directory exists.
func (e *Env) trustJournal(ctx context.Context, create bool, files ...string) (bool, error) {
	if e.journalOK && len(files) == 0 {
		return true, nil
	}
	dir := e.journalDir()
	paths := append([]string{path.Dir(dir), dir}, files...)
	flag := "0"
	if create {
		flag = "1"
	}
	out, err := e.T.Run(ctx, "sh", append([]string{"-c", trustScript, "sh", flag, path.Dir(paths[0])}, paths...)...)
	if err != nil {
		var te *target.Error
		if errors.As(err, &te) && strings.Contains(strings.ToLower(te.Stderr), "permission denied") {
			if create {
				return false, fmt.Errorf("%s: cannot create %s: permission denied; fix --apply needs root", e.T, dir)
			}
			return false, fmt.Errorf("%s: cannot read %s: permission denied; wgperf fix needs root", e.T, dir)
		}
		return false, fmt.Errorf("journal directory %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(paths)+2 {
		return false, fmt.Errorf("%s: checking the journal directory %s: unexpected output %q", e.T, dir, out)
	}
	self := strings.TrimSpace(lines[0])
	if why := lines[1]; why != "ok" {
		return false, fmt.Errorf("%s: %s: %w: refusing to use the journal in it (wgperf runs its undo lines as root; fix the owner and mode)", e.T, why, ErrUntrustedJournal)
	}
	for i, p := range paths {
		l := lines[i+2]
		if l == "missing" {
			if i < 2 {
				return false, nil // no journal yet (and not asked to create one)
			}
			return true, fmt.Errorf("%s: %s: %w", e.T, p, errNoFile)
		}
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 {
			return false, fmt.Errorf("%s: stat %s: unexpected output %q", e.T, p, l)
		}
		uid, modeText, kind := f[0], f[1], f[2]
		mode, err := strconv.ParseUint(modeText, 8, 32)
		if err != nil {
			return false, fmt.Errorf("%s: stat %s: unexpected mode %q", e.T, p, modeText)
		}
		want := "directory"
		if i >= 2 {
			want = "regular file"
			kind = strings.Replace(kind, "regular empty file", want, 1)
		}
		var why string
		switch {
		case kind == "symbolic link":
			why = "is a symbolic link"
		case kind != want:
			why = "is a " + kind + ", not a " + want
		case uid != "0" && uid != self:
			why = "is owned by uid " + uid + ", not by root"
		case mode&0o022 != 0:
			why = fmt.Sprintf("is writable by group or others (mode %o)", mode)
		}
		if why != "" {
			return false, fmt.Errorf("%s: %s %s: %w: refusing to use it (wgperf runs its undo lines as root; remove it or fix its owner and mode)", e.T, p, why, ErrUntrustedJournal)
		}
	}
	e.journalOK = true
	return true, nil
}

// errNoFile is a journal file that is not there.
var errNoFile = errors.New("no such file")

// saveJournal writes j. While j is applied and not yet confirmed, it also
// writes the revert script the watchdog runs, rendered from what the journal
// file says (keys redacted); with a confirm deadline, a script that changed
// gets a watchdog that checks its new SHA-256 (the previous one is ended).
func (e *Env) saveJournal(ctx context.Context, j *Journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if _, err := e.trustJournal(ctx, true); err != nil {
		return err
	}
	if j.State == StateConfirming || j.State == StateApplying {
		var saved Journal
		if err := json.Unmarshal(b, &saved); err != nil {
			return err
		}
		script := revertScript(e, &saved)
		if err := e.T.WriteFile(ctx, e.journalPath(j.ID, ".revert.sh"), []byte(script), 0o700); err != nil {
			return err
		}
		if !j.ConfirmBy.IsZero() && script != j.armed {
			if err := armWatchdog(ctx, e, j, script); err != nil {
				return err
			}
			if b, err = json.MarshalIndent(j, "", "  "); err != nil {
				return err
			}
		}
	}
	return e.T.WriteFile(ctx, e.journalPath(j.ID, ".json"), append(b, '\n'), 0o600)
}

// LoadJournal reads one journal; a marker left by the watchdog means it was rolled back.
func LoadJournal(ctx context.Context, env *Env, id string) (*Journal, error) {
	if !journalIDRE.MatchString(id) {
		return nil, fmt.Errorf("journal %q: not a wgperf journal ID", id)
	}
	if ok, err := env.trustJournal(ctx, false, env.journalPath(id, ".json")); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("journal %s: %s: no such directory", id, env.journalDir())
	}
	b, err := env.T.ReadFile(ctx, env.journalPath(id, ".json"))
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", id, err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("journal %s is damaged: %v", id, err)
	}
	if err := j.check(id); err != nil {
		return nil, fmt.Errorf("journal %s is damaged: %v", id, err)
	}
	if j.State == StateConfirming {
		// A confirm that wrote its marker counts, also when it was cut
		// before it saved the journal: the watchdog heeds the marker.
		if ok, err := env.Exists(ctx, env.journalPath(id, ".confirmed")); err != nil {
			return nil, err
		} else if ok {
			j.State = StateConfirmed
		}
	}
	if j.State != StateRolledBack {
		if ok, err := env.Exists(ctx, env.journalPath(id, ".reverted")); err != nil {
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

// check validates what LoadJournal read: its own ID, and states and statuses
// wgperf writes (rollback and the revert script act on them).
func (j *Journal) check(id string) error {
	if j.ID != id {
		return fmt.Errorf("it calls itself %q", j.ID)
	}
	switch j.State {
	case StateApplying, StateApplied, StateConfirming, StateConfirmed, StateRolledBack:
	default:
		return fmt.Errorf("unknown state %q", j.State)
	}
	for i, e := range j.Entries {
		switch e.Status {
		case EntryPlanned, EntryAlready, EntryPending, EntryApplied, EntryFailed, EntryReverted:
		default:
			return fmt.Errorf("entry %d: unknown status %q", i+1, e.Status)
		}
	}
	return nil
}

// Journals lists journal IDs on the target, oldest first (IDs sort by time).
func Journals(ctx context.Context, env *Env) ([]string, error) {
	ok, err := env.trustJournal(ctx, false)
	if err != nil || !ok {
		return nil, err
	}
	out, err := env.T.Run(ctx, "ls", "--", env.journalDir())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range strings.Fields(string(out)) {
		if id, ok := strings.CutSuffix(n, ".json"); ok && journalIDRE.MatchString(id) {
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
	return nil, fmt.Errorf("%s: no applied fix to roll back (journals in %s)", env.T, env.journalDir())
}

func newJournalID(now time.Time) string {
	return now.UTC().Format("20060102T150405.000000000Z")
}
