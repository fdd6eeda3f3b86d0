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

	mu  sync.Mutex
	in  *io.PipeWriter
	out *bufio.Reader
}

// startTimeout bounds how long the remote wgperf may take to attach.
const startTimeout = 20 * time.Second

// OpenRemote starts "wgperf drops --serve" on t over its ssh connection.
// Without wgperf there it fails with the line the none tier shows.
func OpenRemote(ctx context.Context, t target.Target) (Sampler, error) {
	ctx, cancel := context.WithCancel(ctx)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &Remote{cancel: cancel, done: make(chan error, 1), in: inW, out: bufio.NewReaderSize(outR, 64<<10)}
	go func() {
		err := t.Stream(ctx, inR, outW, nil, "wgperf", "drops", ServeFlag)
		outW.CloseWithError(io.EOF)
		inR.Close()
		r.done <- err
	}()
	type first struct {
		line []byte
		err  error
	}
	got := make(chan first, 1)
	go func() {
		line, err := readLine(r.out)
		got <- first{line, err}
	}()
	var f first
	select {
	case f = <-got:
	case <-time.After(startTimeout):
		f.err = errors.New("no answer in time")
	}
	if f.err != nil {
		r.Close()
		err := <-r.done
		switch {
		case target.IsNotFound(err):
			return nil, fmt.Errorf("wgperf is not installed on %s (kernel drop reasons need it there)", t)
		case err != nil:
			return nil, fmt.Errorf("wgperf drops on %s: %v", t, err)
		}
		return nil, fmt.Errorf("wgperf drops on %s: %v", t, f.err)
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

func (r *Remote) Status() Status { return r.status }

// Snapshot asks the remote sampler for its counts.
func (r *Remote) Snapshot(ctx context.Context) (Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := io.WriteString(r.in, "snapshot\n"); err != nil {
		return Snapshot{}, fmt.Errorf("wgperf drops on %s: %v", r.status.Host, err)
	}
	line, err := readLine(r.out)
	if err != nil {
		return Snapshot{}, fmt.Errorf("wgperf drops on %s: %v", r.status.Host, err)
	}
	s, err := ParseSnapshot(line)
	if err != nil {
		return Snapshot{}, fmt.Errorf("wgperf drops on %s: %v", r.status.Host, err)
	}
	return s, nil
}

// Close ends the remote sampler: its input ends, so it detaches and exits.
func (r *Remote) Close() error {
	r.in.Close()
	select {
	case err := <-r.done:
		r.done <- err
	case <-time.After(5 * time.Second):
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
