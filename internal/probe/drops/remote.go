//go:build !router

package drops

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// The serve protocol, over the standard streams of "wgperf drops --serve"
// on the target: it prints its Status as one JSON line, then answers each
// line it reads with a Snapshot as one JSON line, and detaches and exits at
// the end of its input.

// ServeFlag is the flag of "wgperf drops" that serves a sampler on its standard streams.
const ServeFlag = "--serve"

// maxLine bounds one line of the protocol (MaxEntries counts, each well under 256 bytes).
const maxLine = 2 << 20

// Serve serves host's sampler (this machine's, in wgperf's own namespace)
// until in ends or ctx is done.
func Serve(ctx context.Context, in io.Reader, out io.Writer, host target.Target) error {
	s := ForTarget(ctx, host)
	defer s.Close()
	return serve(ctx, in, out, s)
}

func serve(ctx context.Context, in io.Reader, out io.Writer, s Sampler) error {
	enc := json.NewEncoder(out)
	if err := enc.Encode(s.Status()); err != nil {
		return err
	}
	lines := make(chan struct{})
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- struct{}{}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-lines:
			if !ok {
				return nil
			}
			snap, err := s.Snapshot(ctx)
			if err != nil {
				return err
			}
			if err := enc.Encode(snap); err != nil {
				return err
			}
		}
	}
}

// Remote is the sampler of an ssh target, served by its own wgperf.
type Remote struct {
	status Status
	cancel context.CancelFunc
	done   chan error
	in     *io.PipeWriter
	// lines carries the sampler's answers, read by one goroutine for the
	// remote's whole life, so a wait for one can give up (context, deadline)
	// without a read left half done.
	lines chan answer

	mu   sync.Mutex // one question at a time
	dead error      // set once the sampler stopped answering
}

// answer is one line the remote sampler printed, or why there was none.
type answer struct {
	line []byte
	err  error
}

// startTimeout bounds how long the remote wgperf may take to attach.
const startTimeout = 20 * time.Second

// AnswerTimeout bounds the wait for one snapshot: the remote sampler reads
// a kernel map, which takes milliseconds; one silent this long is stuck
// (or its host is), and the remote is given up for the rest of the run.
var AnswerTimeout = 10 * time.Second

// OpenRemote starts "wgperf drops --serve" on t over its ssh connection.
// Without wgperf there it fails with the line the none tier shows.
func OpenRemote(ctx context.Context, t target.Target) (Sampler, error) {
	ctx, cancel := context.WithCancel(ctx)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &Remote{cancel: cancel, done: make(chan error, 1), in: inW, lines: make(chan answer)}
	go func() {
		err := t.Stream(ctx, inR, outW, nil, "wgperf", "drops", ServeFlag)
		outW.CloseWithError(io.EOF)
		inR.Close()
		r.done <- err
	}()
	go func() {
		// However it ends (a line over maxLine, the output's end, ctx), the
		// pipe is closed, so the stream's writes into it fail and the stream
		// ends instead of waiting for a reader that is gone.
		defer close(r.lines)
		defer outR.CloseWithError(errReaderGone)
		out := bufio.NewReaderSize(outR, 64<<10)
		for {
			line, err := readLine(out)
			select {
			case r.lines <- answer{line, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	f := r.next(ctx, startTimeout)
	if f.err != nil {
		r.Close()
		var err error
		select {
		case err = <-r.done:
			r.done <- err
		case <-time.After(closeWait):
		}
		switch {
		case target.IsNotFound(err):
			return nil, fmt.Errorf("wgperf is not installed on %s (kernel drop reasons need it there)", t)
		case err != nil && errors.Is(f.err, io.EOF):
			return nil, fmt.Errorf("wgperf drops on %s: %v", t, err) // its output ended: the command says why
		}
		return nil, fmt.Errorf("wgperf drops on %s: %v", t, f.err) // a line too long, no answer in time, cancelled
	}
	st, err := ParseStatus(f.line)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("wgperf drops on %s: %v", t, err)
	}
	st.Host = t.String()
	r.status = st
	if st.Tier == TierNone {
		r.Close()
		return nil, errors.New(st.Why)
	}
	return r, nil
}

// next waits for the sampler's next line, at most wait.
func (r *Remote) next(ctx context.Context, wait time.Duration) answer {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a, ok := <-r.lines:
		if !ok {
			return answer{err: errors.New("its output ended")}
		}
		return a
	case <-ctx.Done():
		return answer{err: ctx.Err()}
	case <-timer.C:
		return answer{err: fmt.Errorf("no answer within %s", wait)}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, more, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		if !more {
			return line, nil
		}
	}
}

// Status is the remote's tier, or tier none once it stopped answering: a
// report then says in one line where its counts end.
func (r *Remote) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead != nil {
		return Status{Host: r.status.Host, Tier: TierNone, Why: "the sampler there stopped answering (" + r.dead.Error() + "): its counts end there"}
	}
	return r.status
}

// Snapshot asks the remote sampler for its counts. A sampler that does not
// answer within AnswerTimeout (or before ctx ends) is given up: this and
// every later snapshot fail at once, and the remote is ended.
func (r *Remote) Snapshot(ctx context.Context) (Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead != nil {
		return Snapshot{}, fmt.Errorf("wgperf drops on %s: %v", r.status.Host, r.dead)
	}
	// The pipe's write blocks until the remote reads; a stuck remote must
	// not hold it, so the question is asked beside the wait for the answer.
	asked := make(chan error, 1)
	go func() { _, err := io.WriteString(r.in, "snapshot\n"); asked <- err }()
	a := r.next(ctx, AnswerTimeout)
	if a.err == nil {
		a.err = <-asked
	}
	if a.err != nil {
		// An answer may still come for this question: the next one's would
		// be off by one, so the remote is done either way.
		r.dead = a.err
		r.in.CloseWithError(a.err)
		r.cancel()
		return Snapshot{}, fmt.Errorf("wgperf drops on %s: %v", r.status.Host, a.err)
	}
	s, err := ParseSnapshot(a.line)
	if err != nil {
		return Snapshot{}, fmt.Errorf("wgperf drops on %s: %v", r.status.Host, err)
	}
	return s, nil
}

// closeWait bounds how long Close waits for the remote to exit by itself.
const closeWait = 5 * time.Second

// errReaderGone is what the remote's writes into its output pipe get once
// wgperf stopped reading it.
var errReaderGone = errors.New("wgperf stopped reading the sampler's output")

// Close ends the remote sampler: its input ends, so it detaches and exits;
// one that does not within closeWait is ended with its ssh session.
func (r *Remote) Close() error {
	r.in.Close()
	select {
	case err := <-r.done:
		r.done <- err
	case <-time.After(closeWait):
	}
	r.cancel()
	return nil
}

// What a remote host's names may be.
var (
	reasonRE    = regexp.MustCompile(`^([A-Z0-9_]{1,64}|reason 0x[0-9a-f]{1,8})$`)
	ifindexRE   = regexp.MustCompile(`^ifindex [0-9]{1,10}$`)
	statusTiers = map[string]bool{TierBTF: true, TierTracepoint: true, TierNone: true}
)

// ParseStatus reads a remote sampler's status line: text from another
// host, held to its grammar.
func ParseStatus(line []byte) (Status, error) {
	var s Status
	if err := json.Unmarshal(line, &s); err != nil {
		return s, fmt.Errorf("status: %v", err)
	}
	if !statusTiers[s.Tier] {
		return s, fmt.Errorf("status: tier %q", shell.Comment(s.Tier))
	}
	for _, f := range []*string{&s.Why, &s.Scope} {
		if len(*f) > 512 {
			*f = (*f)[:512]
		}
		*f = shell.Comment(*f)
	}
	return s, nil
}

// ParseSnapshot reads a remote sampler's snapshot, refusing a name outside
// its grammar (a reason, a kernel function, an interface).
func ParseSnapshot(line []byte) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(line, &s); err != nil {
		return s, fmt.Errorf("snapshot: %v", err)
	}
	if len(s.Counts) > MaxCounts {
		return s, fmt.Errorf("snapshot: %d counts, at most %d", len(s.Counts), MaxCounts)
	}
	for _, c := range s.Counts {
		if !reasonRE.MatchString(c.Reason) {
			return s, fmt.Errorf("snapshot: reason %q", shell.Comment(c.Reason))
		}
		if c.Function != "" && !symbolName(c.Function) {
			return s, fmt.Errorf("snapshot: function %q", shell.Comment(c.Function))
		}
		if c.Interface != "" && shell.Iface(c.Interface) != nil && !ifindexRE.MatchString(c.Interface) {
			return s, fmt.Errorf("snapshot: interface %q", shell.Comment(c.Interface))
		}
	}
	return s, nil
}

// MaxCounts is the most counts a snapshot may hold (the kernel map's size).
const MaxCounts = 4096

// Strings for a person: a count in one line.
func (c Count) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ×%d", c.Reason, c.Packets)
	if c.Function != "" {
		fmt.Fprintf(&b, " in %s", c.Function)
	}
	if c.Interface != "" {
		fmt.Fprintf(&b, " on %s", c.Interface)
	}
	return b.String()
}
