package target

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tree is a local program run in a session and process group of its own
// (a guest's vng, QEMU and virtiofsd), which never outlives the wgperf that
// started it, however wgperf ends:
//   - ctx done: the whole group is killed;
//   - the program returned: what it left running in its group is killed;
//   - wgperf killed (SIGKILL, a test binary's timeout panic): a watchdog in
//     the group reads a pipe whose only writer is wgperf; at its end of file
//     the watchdog kills the group. A parent-death signal would reach only
//     the direct child, never QEMU below it.
type Tree struct {
	// Prelude is shell text run in the new session before the program is
	// exec'd (its CPU priority); "" for none.
	Prelude string
	// Env is the program's environment; nil for wgperf's own.
	Env []string
	// Started, when set, is told the process group's id once it runs.
	Started func(pgid int)
}

// treeWaitDelay bounds how long the copying of a tree's output may outlast
// the group's end.
const treeWaitDelay = 2 * time.Second

// treeScript starts the watchdog on fd 3 with its own output closed (so it
// never holds the caller's pipes), closes fd 3 for the rest, runs the
// prelude, then becomes the program.
const treeScript = `(exec </dev/null >/dev/null 2>&1; read -r _ <&3; kill -s KILL 0) &
exec 3<&-
PRELUDE
exec "$@"`

// Run runs name with args locally as a Tree, with stdout and stderr as its
// output, and returns once the program and every process of its group are
// gone. A non-zero exit is an *Error with the exit code.
func (tr Tree) Run(ctx context.Context, stdout, stderr io.Writer, name string, args ...string) error {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return err
	}
	// Only this process holds the write end (os.Pipe sets close-on-exec, so
	// no other child inherits it): its end of file is this process's end.
	defer lifeW.Close()
	argv := append([]string{"-c", strings.Replace(treeScript, "PRELUDE", tr.Prelude, 1), "-", name}, args...)
	cmd := exec.Command("sh", argv...)
	cmd.Env = tr.Env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{lifeR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = treeWaitDelay
	if err := cmd.Start(); err != nil {
		lifeR.Close()
		return &Error{Target: "local", Command: commandLine(name, args), ExitCode: -1, Err: err}
	}
	lifeR.Close()
	pgid := cmd.Process.Pid // Setsid: the leader's pid is the group's id
	if tr.Started != nil {
		tr.Started(pgid)
	}
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	stop := context.AfterFunc(ctx, killGroup)
	err = cmd.Wait()
	stop()
	// The program is gone; so must be whatever it started (an orphaned QEMU
	// holds no pipe of ours once the watchdog's are closed, but holds a CPU).
	killGroup()
	if ctx.Err() != nil {
		return &Error{Target: "local", Command: commandLine(name, args), ExitCode: -1, Err: ctx.Err()}
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	if err != nil {
		return local.fail(name, args, err, "")
	}
	return nil
}

// GroupAlive reports whether any process of group pgid is still running. A
// zombie waiting for a reaper does not count (kill -0 would count it: where
// PID 1 reaps slowly, an ended guest's processes linger as zombies).
func GroupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// state ppid pgrp ...
		if fields, live := statFields(string(b)); live && len(fields) >= 3 {
			if id, err := strconv.Atoi(fields[2]); err == nil && id == pgid {
				return true
			}
		}
	}
	return false
}

// ProcessLive reports whether pid is a process of this machine that is not a
// zombie waiting for its parent to reap it (or being torn down).
func ProcessLive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, live := statFields(string(b))
	return live
}

// statFields splits a /proc/PID/stat line after the command name (state,
// ppid, pgrp, ...) and says whether its state is a live one. The name is in
// parentheses and may hold blanks and parentheses itself: the last ')' ends it.
func statFields(stat string) (fields []string, live bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, false
	}
	fields = strings.Fields(stat[i+1:])
	return fields, len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
