package fix

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/remedy"

	"github.com/wgperf/wgperf/internal/shell"
)

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
`, id, secs, shell.Join(env.journalPath(id, ".confirmed")), shell.Join(env.journalPath(id, ".reverted")),
		shell.Join(env.journalPath(id, ".revert.sh")), shell.Join(env.journalPath(id, ".revert.log")))
	if err := env.T.WriteFile(ctx, wd, []byte(script), 0o700); err != nil {
		return 0, err
	}
	q := shell.Join(wd)
	out, err := env.Sh(ctx, "cd / && if command -v setsid >/dev/null 2>&1; then setsid sh "+q+" </dev/null >/dev/null 2>&1 & else nohup sh "+q+" </dev/null >/dev/null 2>&1 & fi; echo $!")
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
	wd := shell.Join(env.journalPath(j.ID, ".watchdog.sh"))
	_, _ = env.Sh(ctx, fmt.Sprintf("if grep -q %s /proc/%s/cmdline 2>/dev/null; then kill -TERM -%s 2>/dev/null || kill -TERM %s; fi", wd, pid, pid, pid))
}

// revertScript renders a journal's rollback as plain shell: the steps that may
// be in effect, newest first, then a marker that tells wgperf it ran. Text from
// the journal appears in comments only through shell.Comment; files come back
// from the saved content, their key lines from the live file.
func revertScript(env *Env, j *Journal) string {
	var b strings.Builder
	// umask: the files it writes hold keys from the live file before their chmod.
	fmt.Fprintf(&b, "#!/bin/sh\n# Rollback of wgperf fix %s on %s.\numask 077\n", shell.Comment(j.ID), shell.Comment(j.Host))
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
			old := remedy.RedactKeys(f.Old)
			if !remedy.HasRedacted(old) {
				fmt.Fprintf(&b, "%s\nchmod %o %s\n", remedy.Heredoc(f.Path, old), fileModeOf(f), shell.Quote(f.Path))
				continue
			}
			// The journal holds no keys: merge the live file's key lines into the saved content.
			tmp := f.Path + ".wgperf-undo"
			fmt.Fprintf(&b, "%s\nawk -v mark=%s %s %s %s > %s && chmod %o %s && mv -f %s %s || echo %s >&2\nrm -f %s %s\n",
				remedy.Heredoc(tmp, old), shell.Quote(remedy.KeyMark), shell.Quote(restoreAwk), shell.Quote(f.Path), shell.Quote(tmp),
				shell.Quote(tmp+".new"), fileModeOf(f), shell.Quote(tmp+".new"), shell.Quote(tmp+".new"), shell.Quote(f.Path),
				shell.Quote("wgperf: undo failed: restore "+f.Path), shell.Quote(tmp), shell.Quote(tmp+".new"))
		}
	}
	fmt.Fprintf(&b, "\necho \"$(date) by the confirm watchdog\" > %s\n", shell.Quote(env.journalPath(j.ID, ".reverted")))
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
