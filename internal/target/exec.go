package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
)

// argvTarget runs programs by prefixing their argv: nothing for local,
// "ip netns exec NAME" for a namespace, "ssh ... host --" for ssh.
type argvTarget struct {
	spec string
	// wrap turns a program and its arguments into the local argv that runs it
	// there; extra are options session returned.
	wrap func(extra []string, name string, args []string) []string
	// session, when set, runs before each command (ssh: a slot on the shared
	// connection, which it starts if needed; long is true for Start). It
	// returns extra options for wrap and a release to call when the command
	// has ended; stderr explains an error.
	session func(ctx context.Context, long bool) (extra []string, release func(), stderr string, err error)
	// missing recognises a "program not found" failure from exit code and stderr.
	missing func(code int, stderr string) bool
	// here is set for targets whose argv runs on this machine as it is
	// (local, netns): the program is found in Path and runs with it. An ssh
	// target's wrap sets the remote PATH itself.
	here bool
	// remote is set for ssh: Shell runs its short commands in one remote shell.
	remote bool
}

// command is the local command that runs argv until ctx is done.
func (t *argvTarget) command(ctx context.Context, argv []string) *exec.Cmd {
	if t.here {
		return pathCommand(ctx, argv)
	}
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

func (t *argvTarget) String() string { return t.spec }

func (t *argvTarget) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return t.RunInput(ctx, nil, name, args...)
}

// open runs the session hook and returns the argv for name and args.
func (t *argvTarget) open(ctx context.Context, long bool, name string, args []string) ([]string, func(), error) {
	if t.session == nil {
		return t.wrap(nil, name, args), func() {}, nil
	}
	extra, release, stderr, err := t.session(ctx, long)
	if err != nil {
		return nil, nil, t.fail(name, args, err, stderr)
	}
	return t.wrap(extra, name, args), release, nil
}

func (t *argvTarget) RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	argv, release, err := t.open(ctx, false, name, args)
	if err != nil {
		return nil, err
	}
	defer release()
	// Output beyond MaxOutput (or the context's read budget) stops the
	// command: a host printing without end costs time, not memory.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := t.command(runCtx, argv)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	stdout := newLimitedBuffer(ctx, stop)
	stderr := &Tail{max: 8 << 10} // the reason is in its last lines
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if cut := stdout.err(); cut != nil {
		return stdout.Bytes(), t.fail(name, args, cut, "")
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	return stdout.Bytes(), t.fail(name, args, err, stderr.String())
}

// streamWaitDelay bounds how long a streamed command's copying may outlive
// its end or its context: a child that kept the pipes (a remote shell's
// background job) or a standard input that never ends must not keep Stream
// from returning.
const streamWaitDelay = 2 * time.Second

func (t *argvTarget) Stream(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, name string, args ...string) error {
	// A stream lives as long as its program (a sampler, a shell a person
	// types into), so over ssh it takes no short-command slot, as Start does:
	// holding the only one would starve every other command to that host.
	argv, release, err := t.open(ctx, true, name, args)
	if err != nil {
		return err
	}
	defer release()
	cmd := t.command(ctx, argv)
	cmd.WaitDelay = streamWaitDelay
	stdin, stdout, stderr = guardStreams(ctx, stdin, stdout, stderr)
	cmd.Stdin, cmd.Stdout = stdin, stdout
	tail := &Tail{max: 8 << 10}
	cmd.Stderr = tail
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, tail)
	}
	err = cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil {
		err = nil // it ended well; only a child of its kept the pipes
	}
	if err != nil {
		return t.fail(name, args, err, tail.String())
	}
	return nil
}

func (t *argvTarget) fail(name string, args []string, err error, stderr string) error {
	e := &Error{Target: t.spec, Command: commandLine(name, args), ExitCode: -1, Stderr: stderr, Err: err}
	var exitErr *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrNotFound):
		e.Err = fmt.Errorf("%w: %s", ErrNotFound, name)
		e.Stderr = name + ": command not found"
	case errors.As(err, &exitErr):
		e.ExitCode = exitErr.ExitCode()
		e.Err = err
		if t.missing != nil && t.missing(e.ExitCode, stderr) {
			e.Err = fmt.Errorf("%w: %s", ErrNotFound, name)
		}
	}
	return e
}

func (t *argvTarget) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return t.Run(ctx, "cat", "--", path)
}

func (t *argvTarget) WriteFile(ctx context.Context, path string, data []byte, perm os.FileMode) error {
	// Write to a temporary name and rename, so a reader never sees half a file.
	script := fmt.Sprintf("umask 077; t=%s.wgperf-tmp.$$; cat > \"$t\" && chmod %o \"$t\" && mv -f \"$t\" %s",
		shell.Quote(path), perm.Perm(), shell.Quote(path))
	_, err := t.RunInput(ctx, data, "sh", "-c", script)
	return err
}

func (t *argvTarget) Start(ctx context.Context, name string, args ...string) (*Process, error) {
	argv, release, err := t.open(ctx, true, name, args)
	if err != nil {
		return nil, err
	}
	cmd := t.command(context.Background(), argv) // ctx ends it through the watcher below
	tail := &Tail{max: 8 << 10}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		release()
		return nil, t.fail(name, args, err, "")
	}
	p := &Process{cmd: cmd, desc: t.spec + ": " + commandLine(name, args), done: make(chan struct{}), stderr: tail}
	go func() {
		err := cmd.Wait()
		release()
		if err != nil {
			p.err = t.fail(name, args, err, tail.String())
		}
		close(p.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

// localTarget reads and writes files directly instead of spawning cat.
type localTarget struct{ argvTarget }

var local = &localTarget{argvTarget{spec: "local", here: true, wrap: func(_ []string, name string, args []string) []string {
	return append([]string{name}, args...)
}}}

// Local is the machine wgperf runs on.
func Local() Target { return local }

func (t *localTarget) ReadFile(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Target: t.spec, Command: "read " + path, ExitCode: -1, Err: err}
	}
	defer f.Close()
	b, err := readLimited(ctx, f)
	if err != nil {
		return b, &Error{Target: t.spec, Command: "read " + path, ExitCode: -1, Err: err}
	}
	return b, nil
}

func (t *localTarget) WriteFile(_ context.Context, path string, data []byte, perm os.FileMode) error {
	tmp := fmt.Sprintf("%s.wgperf-tmp.%d", path, os.Getpid())
	err := os.WriteFile(tmp, data, perm)
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return &Error{Target: t.spec, Command: "write " + path, ExitCode: -1, Err: err}
	}
	return nil
}

// Netns is a network namespace on the local machine, entered with "ip netns exec".
// Files are read from inside the namespace, so /proc/net and /sys/class/net are its own.
func Netns(name string) Target {
	return &argvTarget{
		spec: "netns:" + name,
		here: true,
		wrap: func(_ []string, prog string, args []string) []string {
			return append([]string{"ip", "netns", "exec", name, prog}, args...)
		},
		// ip netns exec reports a missing program as: exec of "x" failed: No such file or directory.
		missing: func(code int, stderr string) bool {
			return strings.Contains(stderr, "exec of") && strings.Contains(stderr, "No such file")
		},
	}
}

func commandLine(name string, args []string) string { return shell.Join(name, args...) }

// Tail keeps the last max bytes written to it: where a program says why it
// failed (its stderr), or a guest's last words.
type Tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

// NewTail returns a Tail that keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (b *Tail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *Tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
