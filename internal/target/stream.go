package target

import (
	"context"
	"io"
	"os"
)

// A stream's standard streams are the caller's reader and writers: a pipe
// nobody reads any more (a reader that gave up on a line too long) would
// hold the copy into it, and with it the command's end, for ever: os/exec
// waits for its copying goroutines even past WaitDelay. guardedWriter and
// guardedReader give up when ctx is done, so a cancelled stream (SIGTERM)
// ends within streamWaitDelay whatever its caller's pipes do; the write or
// read left behind ends when that pipe is closed.

type guardedWriter struct {
	ctx context.Context
	w   io.Writer
}

type ioResult struct {
	n   int
	err error
}

func (g guardedWriter) Write(p []byte) (int, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	// The write gets a copy: one left behind must not read p after Write returned.
	buf := append([]byte(nil), p...)
	done := make(chan ioResult, 1)
	go func() { n, err := g.w.Write(buf); done <- ioResult{n, err} }()
	select {
	case r := <-done:
		return r.n, r.err
	case <-g.ctx.Done():
		return 0, g.ctx.Err()
	}
}

type guardedReader struct {
	ctx context.Context
	r   io.Reader
}

func (g guardedReader) Read(p []byte) (int, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	// The read gets a buffer of its own: one left behind must not write
	// into p after Read returned.
	buf := make([]byte, len(p))
	done := make(chan ioResult, 1)
	go func() { n, err := g.r.Read(buf); done <- ioResult{n, err} }()
	select {
	case r := <-done:
		return copy(p, buf[:r.n]), r.err
	case <-g.ctx.Done():
		return 0, g.ctx.Err()
	}
}

// guardStreams wraps the caller's streams for a command run under ctx; an
// *os.File (a terminal) goes to the command as it is, with no copy to hold.
func guardStreams(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (io.Reader, io.Writer, io.Writer) {
	if stdin != nil && !isFile(stdin) {
		stdin = guardedReader{ctx, stdin}
	}
	if stdout != nil && !isFile(stdout) {
		stdout = guardedWriter{ctx, stdout}
	}
	if stderr != nil && !isFile(stderr) {
		stderr = guardedWriter{ctx, stderr}
	}
	return stdin, stdout, stderr
}

func isFile(v any) bool { _, ok := v.(*os.File); return ok }
