package fix

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
)

// untrustedSh defines untrusted DIR UID, which prints why DIR cannot be
// trusted, or nothing: every directory from / down to DIR, as the path is
// written and as it resolves, must be owned by root or UID and writable by
// nobody else (a sticky directory such as /tmp excepted: nobody can rename
// what others own in it). Symbolic links on the way are judged by the
// directory holding them. It is plain POSIX shell with stat(1), so the
// watchdog can run it on a host without wgperf; trustJournal runs it too.
const untrustedSh = `untrusted() {
	_u=$2
	_real=$(cd -P -- "$1" 2>/dev/null && pwd -P) || { echo "$1 cannot be resolved"; return 0; }
	for _path in "$1" "$_real"; do
		_c=/
		_rest=${_path#/}
		while :; do
			_s=$(stat -c '%u %f' -- "$_c" 2>/dev/null) || { echo "$_c cannot be read"; return 0; }
			_uid=${_s% *}
			_m=$((0x${_s#* }))
			if [ "$_uid" != 0 ] && [ "$_uid" != "$_u" ]; then
				echo "$_c is owned by uid $_uid, not by root"; return 0
			fi
			_t=$((_m & 0170000))
			if [ "$_t" = $((0120000)) ]; then
				: # a symbolic link: the directory holding it was checked, and the resolved path is
			elif [ "$_t" != $((0040000)) ]; then
				echo "$_c is not a directory"; return 0
			elif [ $((_m & 022)) != 0 ] && [ $((_m & 01000)) = 0 ]; then
				printf '%s is writable by group or others (mode %o)\n' "$_c" $((_m & 07777)); return 0
			fi
			[ -z "$_rest" ] && break
			_c=${_c%/}/${_rest%%/*}
			case $_rest in */*) _rest=${_rest#*/} ;; *) _rest= ;; esac
		done
	done
}`

// watchdogSh sleeps, then runs the journal's revert script unless the fix
// was confirmed or rolled back meanwhile. Before it runs anything it checks
// the journal directory as trustJournal does and the script against the
// SHA-256 wgperf recorded when it armed this watchdog: a journal directory
// swapped above a writable parent, or a script changed since, is refused
// (in the system log) and nothing runs. The script runs from memory, as it
// was hashed. Arguments: seconds, journal directory, journal ID, SHA-256 of
// the revert script, the user id that armed it.
const watchdogSh = `trap '' HUP
sleep "$1"
dir=$2 id=$3 want=$4 uid=$5
refuse() {
	logger -t wgperf "fix $id: the confirm watchdog did not roll back: $1" 2>/dev/null
	echo "wgperf: fix $id: the confirm watchdog did not roll back: $1" >&2
	exit 1
}
` + untrustedSh + `
why=$(untrusted "$dir" "$uid")
[ -z "$why" ] || refuse "$why"
[ -e "$dir/$id.confirmed" ] && exit 0
[ -e "$dir/$id.reverted" ] && exit 0
f=$dir/$id.revert.sh
{ [ -f "$f" ] && [ ! -L "$f" ]; } || refuse "$f is not a regular file"
s=$(cat -- "$f" && echo x) || refuse "cannot read $f"
s=${s%x}
h=$(printf '%s' "$s" | sha256sum) || refuse "sha256sum failed"
[ "${h%% *}" = "$want" ] || refuse "$f is not the script wgperf wrote (sha256 ${h%% *}, want $want)"
( eval "$s" ) </dev/null >"$dir/$id.revert.log" 2>&1
`

// watchdogName is the name ($0) a journal's watchdog runs under, which
// stopWatchdog looks for before it signals a process.
func watchdogName(id string) string { return "wgperf-watchdog-" + id }

// armWatchdog starts a detached shell on the target that waits until j's
// confirm deadline, then runs the revert script unless the fix was confirmed
// or rolled back; then it ends j's previous watchdog, which guards an older
// script. The script is the one saveJournal has just written: its SHA-256 is
// taken there (sha256sum, so the router build carries no crypto of its own)
// and handed to the watchdog. It is plain POSIX shell, so it works where
// wgperf is not installed, and it survives the session that started it.
func armWatchdog(ctx context.Context, env *Env, j *Journal, script string) error {
	secs := max(int((time.Until(j.ConfirmBy)+time.Second-1)/time.Second), 0)
	args := shell.Join("sh", "-c", watchdogSh, watchdogName(j.ID), strconv.Itoa(secs), env.journalDir(), j.ID) + ` "$h" "$(id -u)"`
	line := "command -v sha256sum >/dev/null || { echo 'sha256sum not found: the confirm watchdog needs it' >&2; exit 1; }\n" +
		"h=$(sha256sum < " + shell.Quote(env.journalPath(j.ID, ".revert.sh")) + ") && h=${h%% *} || exit 1\n" +
		"cd / && if command -v setsid >/dev/null 2>&1; then setsid " + args + " </dev/null >/dev/null 2>&1 & else nohup " + args + " </dev/null >/dev/null 2>&1 & fi; echo $!\n" +
		stopLine(j)
	out, err := env.Sh(ctx, line)
	if err != nil {
		return fmt.Errorf("arm the confirm watchdog: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("arm the confirm watchdog: unexpected pid %q", out)
	}
	j.WatchdogPID, j.armed = pid, script
	return nil
}

// stopLine is the shell that ends j's watchdog (and its sleep) if it still
// runs; it checks the process is that watchdog before signalling it.
func stopLine(j *Journal) string {
	if j.WatchdogPID <= 0 {
		return ""
	}
	pid := strconv.Itoa(j.WatchdogPID)
	return fmt.Sprintf("if grep -q %s /proc/%s/cmdline 2>/dev/null; then kill -TERM -%s 2>/dev/null || kill -TERM %s; fi",
		shell.Quote(watchdogName(j.ID)), pid, pid, pid)
}

// stopWatchdog ends j's watchdog if it still runs.
func stopWatchdog(ctx context.Context, env *Env, j *Journal) {
	if line := stopLine(j); line != "" {
		_, _ = env.Sh(ctx, line)
	}
}

// revertScript renders a journal's rollback as plain shell: the steps that may
// be in effect, newest first, then a marker that tells wgperf it ran. Text from
// the journal appears in comments only through shell.Comment; files come back
// from the saved content, their key lines from the live file.
func revertScript(env *Env, j *Journal) string {
	var b strings.Builder
	// umask: the files it writes hold keys from the live file before their chmod.
	fmt.Fprintf(&b, "#!/bin/sh\n# Rollback of wgperf fix %s on %s.\numask 077\n", shell.Comment(j.ID), shell.Comment(j.Host.String()))
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := j.Entries[i]
		if e.Status != EntryApplied && e.Status != EntryPending && e.Status != EntryFailed {
			continue
		}
		fmt.Fprintf(&b, "\n# undo: %s\n", shell.Comment(e.Description))
		for _, c := range e.Step.Undo {
			fmt.Fprintf(&b, "{\n%s\n} || echo %s >&2\n", c, shell.Quote("wgperf: undo failed: "+firstLine(c)))
		}
		for _, f := range e.Step.Files {
			if !f.Existed {
				fmt.Fprintf(&b, "rm -f %s\n", shell.Quote(f.Path))
				continue
			}
			fmt.Fprintf(&b, "%s\n", writeLines(f.Path, f.Old, fileModeOf(f), "echo "+shell.Quote("wgperf: undo failed: restore "+f.Path)+" >&2"))
		}
	}
	fmt.Fprintf(&b, "\necho \"$(date) by the confirm watchdog\" > %s\n", shell.Quote(env.journalPath(j.ID, ".reverted")))
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
