package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
)

// Defaults for Options.
const (
	DefaultConcurrency = 8
	DefaultHostTimeout = 30 * time.Second
)

// Options tune a fleet collection.
type Options struct {
	// Concurrency bounds how many hosts are collected at once; 0 means DefaultConcurrency.
	Concurrency int
	// HostTimeout bounds the collection of one host; 0 means DefaultHostTimeout.
	HostTimeout time.Duration
	// Collect is passed to collect.Collect (its Timeout is set to HostTimeout).
	Collect collect.Options
	// Progress, when set, receives one line per host as it starts and ends.
	Progress io.Writer
	// SSH is how the hosts' ssh targets connect (target.HostSSH.Conns).
	SSH target.SSHConns

	// collect replaces collect.Collect in tests.
	collect func(context.Context, target.Target, collect.Options) (*facts.Snapshot, error)
}

// Unreachable is a host that could not be collected.
type Unreachable struct {
	Host  target.Spec `json:"host"`           // target spec
	Name  string      `json:"name,omitempty"` // inventory name, when it is not the spec
	Error string      `json:"error"`          // one line
}

// Hosts turns target specs (as given with --host) into Hosts, failing on the
// first malformed one.
func Hosts(specs []string) ([]Host, error) {
	out := make([]Host, 0, len(specs))
	for _, s := range specs {
		spec, err := target.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		out = append(out, Host{Name: s, Target: spec})
	}
	return out, nil
}

// Collect collects every host, at most Concurrency at a time, each within
// HostTimeout. It returns the snapshots of the hosts that answered and the
// hosts that did not, both in inventory order. Its error is only ever the
// caller's context ending: a host failing is an Unreachable, not an error.
func Collect(ctx context.Context, hosts []Host, o Options) ([]*facts.Snapshot, []Unreachable, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.HostTimeout <= 0 {
		o.HostTimeout = DefaultHostTimeout
	}
	if o.collect == nil {
		o.collect = collect.Collect
	}
	o.Collect.Timeout = o.HostTimeout

	snaps := make([]*facts.Snapshot, len(hosts))
	errs := make([]error, len(hosts))
	var (
		mu   sync.Mutex
		done int
	)
	say := func(format string, args ...any) {
		if o.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
	finished := func() int {
		mu.Lock()
		defer mu.Unlock()
		done++
		return done
	}

	slots := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-slots }()
			start := time.Now()
			say("collecting %s…", h.Target)
			snaps[i], errs[i] = collectOne(ctx, h, o)
			n := finished()
			if errs[i] != nil {
				say("[%d/%d] %s: unreachable: %v", n, len(hosts), h.Target, errs[i])
			} else {
				say("[%d/%d] collected %s in %.1fs", n, len(hosts), h.Target, time.Since(start).Seconds())
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}

	var got []*facts.Snapshot
	var missing []Unreachable
	for i, h := range hosts {
		if errs[i] == nil {
			got = append(got, snaps[i])
			continue
		}
		u := Unreachable{Host: h.Target, Error: errs[i].Error()}
		if h.Name != h.Target.String() { // a name of its own to show beside the spec
			u.Name = h.Name
		}
		missing = append(missing, u)
	}
	return got, missing, nil
}

// collectOne collects one host within the host timeout. The timeout is also
// enforced here, so a collector that ignores its context cannot hold a slot.
func collectOne(ctx context.Context, h Host, o Options) (*facts.Snapshot, error) {
	h.SSH.Conns = o.SSH
	t, err := h.Open()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.HostTimeout)
	defer cancel()
	type result struct {
		snap *facts.Snapshot
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := o.collect(ctx, t, o.Collect)
		ch <- result{s, err}
	}()
	timedOut := func() error {
		return fmt.Errorf("%s: no answer within %s (--host-timeout)", h.Target, o.HostTimeout)
	}
	select {
	case r := <-ch:
		if r.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, timedOut()
		}
		return r.snap, r.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, timedOut()
		}
		return nil, ctx.Err()
	}
}
