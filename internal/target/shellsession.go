package target

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"golang.org/x/sys/unix"
)

// Shell returns a Target that runs t's short commands (Run, ReadFile, and
// RunInput without input) one after another in one remote shell, and the
// function that ends that shell. Over ssh a collection's commands then cost
// one ssh process and one session on the router instead of one each (a
// fleet exporter measured seven ssh clients and sessions a collection,
// about 110 ms of CPU; issue 54). Other kinds, and RunInput with input,
// Stream, Start and WriteFile, go to t as before. The shell starts with the
// first command; a command cut short (its context, its output limit) ends
// it, and the commands after it fail as the first did.
func Shell(t Target) (Target, func()) {
	at, ok := t.(*argvTarget)
	if !ok || !at.remote {
		return t, func() {}
	}
	s := &shellTarget{argvTarget: at}
	return s, s.close
}

// shellTarget is a Target whose short commands go through one remote sh
// reading commands on its standard input. Each command's standard output
// comes back as it is printed, followed by a line with a per-shell random
// mark, its exit status and its standard error (captured by the shell):
//
//	OUTPUT \n MARK SP STATUS \n STDERR \n MARK \n
type shellTarget struct {
	*argvTarget

	mu      sync.Mutex
	started bool
	broken  error // set once the shell can run no more: every later command fails with it
	mark    string
	stdin   io.WriteCloser
	stdout  io.ReadCloser
	cmd     *exec.Cmd
	release func()
	stderr  *Tail         // ssh's own standard error (why a connection failed)
	chunks  chan []byte   // the shell's standard output as read; closed at its end
	done    chan struct{} // closed once the process has been waited for
	waitErr error         // the process's exit, valid after done
	stop    chan struct{} // close asks the reader to give up
	pending []byte        // read and not yet consumed
}

// shellPrelude runs once: fd 3 is the shell's standard output, which each
// command writes to while its standard error is captured, and PATH is the
// one every command runs with (ssh.go's argv sets it per command).
func shellPrelude() string {
	return "exec 3>&1\nPATH=" + shell.Quote(Path) + "\nexport PATH\n"
}

// shellCommand is one command as the shell reads it: its standard input is
// /dev/null (it must not read the shell's next commands), its output goes
// to fd 3 as it comes, its standard error is printed after the mark.
func (s *shellTarget) shellCommand(name string, args []string) string {
	return "e=$( { " + commandLine(name, args) + "\n} </dev/null 2>&1 >&3 3>&-); rc=$?\n" +
		"printf '\\n%s %d\\n%s\\n%s\\n' " + s.mark + " \"$rc\" \"$e\" " + s.mark + "\n"
}

func (s *shellTarget) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return s.RunInput(ctx, nil, name, args...)
}

func (s *shellTarget) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return s.Run(ctx, "cat", "--", path)
}

func (s *shellTarget) RunInput(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	if stdin != nil {
		return s.argvTarget.RunInput(ctx, stdin, name, args...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started = true
		s.broken = s.start(ctx)
	}
	if s.broken != nil {
		return nil, s.failWith(name, args, s.broken)
	}
	// A shell that ended cannot take the command: reading its output then
	// finds the end, and the process's exit says why.
	_, _ = io.WriteString(s.stdin, s.shellCommand(name, args))
	out := newLimitedBuffer(ctx, nil)
	if err := s.readUntil(ctx, []byte("\n"+s.mark+" "), func(p []byte) error { _, err := out.Write(p); return err }); err != nil {
		if cut := out.err(); cut != nil {
			s.kill(cut)
			return out.Bytes(), s.fail(name, args, cut, "")
		}
		s.kill(err)
		return out.Bytes(), s.failWith(name, args, s.broken)
	}
	var status []byte
	collect := func(p []byte) error {
		if len(status)+len(p) > 16 {
			return errors.New("no exit status after the output")
		}
		status = append(status, p...)
		return nil
	}
	errTail := &Tail{max: 8 << 10}
	if err := s.readUntil(ctx, []byte("\n"), collect); err == nil {
		err = s.readUntil(ctx, []byte("\n"+s.mark+"\n"), func(p []byte) error { _, _ = errTail.Write(p); return nil })
		if err != nil {
			s.kill(err)
		}
	} else {
		s.kill(err)
	}
	if s.broken != nil {
		return out.Bytes(), s.failWith(name, args, s.broken)
	}
	code, err := strconv.Atoi(string(status))
	if err != nil {
		s.kill(fmt.Errorf("exit status %q", status))
		return out.Bytes(), s.failWith(name, args, s.broken)
	}
	if code == 0 {
		return out.Bytes(), nil
	}
	e := &Error{Target: s.spec, Command: commandLine(name, args), ExitCode: code, Stderr: errTail.String(),
		Err: fmt.Errorf("exit status %d", code)}
	if s.missing != nil && s.missing(code, e.Stderr) {
		e.Err = fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return out.Bytes(), e
}

// start runs the shell; s.mu is held. The process outlives ctx (it serves
// the commands after this one): close, or a command cut short, ends it.
func (s *shellTarget) start(ctx context.Context) error {
	s.mark = "wgperf-" + hex.EncodeToString(nonce())
	argv, release, err := s.open(ctx, true, "sh", nil)
	if err != nil {
		return err
	}
	s.release = release
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.stderr = &Tail{max: 8 << 10}
	s.cmd.Stderr = s.stderr
	// Its own process group: a kill reaches what the local command started
	// (ip netns exec's ssh, a test's sh), so none keeps the output open.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		release()
		return err
	}
	if s.stdout, err = s.cmd.StdoutPipe(); err != nil {
		release()
		return err
	}
	if err := s.cmd.Start(); err != nil {
		release()
		return err
	}
	s.chunks, s.done, s.stop = make(chan []byte), make(chan struct{}), make(chan struct{})
	go s.read(s.stdout)
	_, _ = io.WriteString(s.stdin, shellPrelude()) // as a command's write
	return nil
}

// read hands the shell's output to the command waiting for it, then waits
// for the process.
func (s *shellTarget) read(stdout io.Reader) {
	defer close(s.done)
	defer func() { s.waitErr = s.cmd.Wait() }()
	defer close(s.chunks)
	for {
		buf := make([]byte, 32<<10)
		n, err := stdout.Read(buf)
		if n > 0 {
			select {
			case s.chunks <- buf[:n]:
			case <-s.stop:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readUntil passes the output before mark to sink and consumes mark. Of
// what it has read it holds back only what could be the start of mark.
func (s *shellTarget) readUntil(ctx context.Context, mark []byte, sink func([]byte) error) error {
	for {
		if i := bytes.Index(s.pending, mark); i >= 0 {
			err := sink(s.pending[:i])
			s.pending = append(s.pending[:0], s.pending[i+len(mark):]...)
			return err
		}
		if n := len(s.pending) - (len(mark) - 1); n > 0 {
			if err := sink(s.pending[:n]); err != nil {
				return err
			}
			s.pending = append(s.pending[:0], s.pending[n:]...)
		}
		select {
		case chunk, ok := <-s.chunks:
			if !ok {
				<-s.done
				if s.waitErr != nil {
					return s.waitErr
				}
				return io.ErrUnexpectedEOF
			}
			s.pending = append(s.pending, chunk...)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// kill ends the shell after err; s.mu is held. Later commands fail with
// the first reason.
func (s *shellTarget) kill(err error) {
	if s.broken == nil {
		s.broken = err
	}
	s.end(0)
}

// end closes the shell's input, gives it grace to exit and kills it after;
// s.mu is held.
func (s *shellTarget) end(grace time.Duration) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.stdin.Close()
	close(s.stop) // no one reads what it prints now
	select {
	case <-s.done:
	case <-time.After(grace):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.stdout.Close() // the reader's Read returns
		<-s.done
	}
	s.cmd = nil
	s.release()
}

// close ends the shell: its input closes, so it exits.
func (s *shellTarget) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = errors.New("the shell was closed")
	}
	s.end(2 * time.Second)
}

// failWith is the error of a command that could not run because the shell
// ended: ssh's standard error says why (a connection that failed).
func (s *shellTarget) failWith(name string, args []string, err error) error {
	stderr := ""
	if s.stderr != nil {
		stderr = s.stderr.String()
	}
	return s.fail(name, args, err, stderr)
}

// nonce is 12 bytes from the kernel's random source: the mark that ends each
// command's output must not be one a line of untrusted text (a log a stranger
// wrote to) could carry. getrandom(2), not crypto/rand, which would bring the
// FIPS module's packages into the router build (about 330 KB on mipsle).
func nonce() []byte {
	b := make([]byte, 12)
	if n, err := unix.Getrandom(b, 0); err != nil || n != len(b) {
		// No getrandom (a kernel before 3.17): the pid and the clock, still
		// unknown to whoever wrote the text beforehand.
		binary.BigEndian.PutUint32(b, uint32(os.Getpid()))
		binary.BigEndian.PutUint64(b[4:], uint64(time.Now().UnixNano()))
	}
	return b
}
