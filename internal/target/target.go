// Package target runs programs and reads files on a host: the local machine, a
// network namespace on it, or a remote machine reached with the system ssh client.
//
// A host is named by a spec, parsed once into a Spec (spec.go) by the kind
// whose prefix it carries; kinds (kind.go) lists every kind with all that
// wgperf knows of it, and help, completion and the exporter's allow-list
// derive from that list.
//
// Everything in wgperf that touches a host goes through a Target, so the same
// collector, probe or fix works unchanged on all three. Errors always name the
// target and the command, e.g. "ssh:golem: ssh: connect to host golem port 22:
// Connection refused".
package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Target is a host on which commands run. Implementations are safe for
// concurrent use.
type Target interface {
	// String is the spec the target was parsed from ("local", "netns:a", "ssh:root@golem").
	String() string
	// Run runs a program to completion and returns its standard output. A non-zero
	// exit becomes an *Error carrying the standard error text.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
	// RunInput is Run with data fed to the program's standard input.
	RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)
	// ReadFile returns a file's contents as the host sees it (for netns, /proc/net
	// is the namespace's own).
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces a file's contents, creating it with mode perm if needed.
	WriteFile(ctx context.Context, path string, data []byte, perm os.FileMode) error
	// Stream runs a program with the given standard streams (nil: none), for
	// output a person watches as it comes ("wgperf lab exec") or a program
	// that answers for as long as it runs (a remote drop sampler). It takes
	// no short-command slot of a shared ssh connection, and returns soon
	// after ctx is done even if the program's children keep its streams.
	Stream(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, name string, args ...string) error
	// Start launches a long-running program (iperf3 -s, a lab node) and returns
	// without waiting for it.
	Start(ctx context.Context, name string, args ...string) (*Process, error)
}

// Error is a failed command on a target.
type Error struct {
	Target   string
	Command  string
	ExitCode int // -1 when the program did not run or was killed
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	// Keep to one line: the last line of stderr is where tools put the reason.
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	return fmt.Sprintf("%s: %s: %s", e.Target, shortCommand(e.Command), msg)
}

// maxCommandShown is how much of a command an error shows.
const maxCommandShown = 100

// shortCommand is a command as an error names it: one line of at most
// maxCommandShown characters. A shell script shows its start, never its
// whole source (Command keeps it all).
func shortCommand(c string) string {
	first, _, multi := strings.Cut(c, "\n")
	if r := []rune(first); len(r) > maxCommandShown {
		first, multi = string(r[:maxCommandShown]), true
	}
	if multi {
		return strings.TrimSpace(first) + " …"
	}
	return first
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotFound is wrapped by errors for a program that is not installed on the target.
var ErrNotFound = errors.New("command not found")

// IsNotFound reports whether err says the program is missing on the target.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Process is a program started with Target.Start.
type Process struct {
	cmd    *exec.Cmd
	desc   string
	done   chan struct{}
	err    error
	stderr *Tail
}

// Pid is the local process id (for ssh, the id of the local ssh client).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait blocks until the program exits and returns its error, if any.
func (p *Process) Wait() error { <-p.done; return p.err }

// Exited reports whether the program has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the program: SIGTERM, then SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) error {
	if p.Exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// Stderr returns the last few KiB the program wrote to standard error.
func (p *Process) Stderr() string { return p.stderr.String() }

func (p *Process) String() string { return p.desc }
