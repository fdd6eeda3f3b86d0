package fleet

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// fakeCollect answers by host: "netns:down" fails at once, "netns:hang"
// blocks until its context ends, anything else answers after a short wait.
// It records the highest number of collections running at once.
type fakeCollect struct {
	running, peak atomic.Int32
	sawTimeout    atomic.Int64 // collect.Options.Timeout as passed, in ns
}

func (f *fakeCollect) collect(ctx context.Context, t target.Target, o collect.Options) (*facts.Snapshot, error) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	f.sawTimeout.Store(int64(o.Timeout))
	switch t.String() {
	case "netns:down":
		return nil, errors.New("netns:down: uname -r: Cannot open network namespace \"down\": No such file or directory")
	case "netns:hang":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	select {
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &facts.Snapshot{Host: targettest.Spec(t.String())}, nil
}

func hostsOf(specs ...string) []Host {
	h, err := Hosts(specs)
	if err != nil {
		panic(err)
	}
	return h
}

func TestCollectReportsUnreachableAndKeepsOrder(t *testing.T) {
	f := &fakeCollect{}
	hosts := hostsOf("netns:h1", "netns:down", "netns:h2", "netns:hang", "netns:h3")
	hosts[1].Name = "berlin-router"
	var progress bytes.Buffer
	snaps, missing, err := Collect(context.Background(), hosts, Options{HostTimeout: 200 * time.Millisecond, Progress: &progress, collect: f.collect})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range snaps {
		got = append(got, s.Host.String())
	}
	if d := cmp.Diff([]string{"netns:h1", "netns:h2", "netns:h3"}, got); d != "" {
		t.Errorf("collected (-want +got):\n%s", d)
	}
	want := []Unreachable{
		{Host: targettest.Spec("netns:down"), Name: "berlin-router", Error: "netns:down: uname -r: Cannot open network namespace \"down\": No such file or directory"},
		{Host: targettest.Spec("netns:hang"), Error: "netns:hang: no answer within 200ms (--host-timeout)"},
	}
	if d := cmp.Diff(want, missing); d != "" {
		t.Errorf("unreachable (-want +got):\n%s", d)
	}
	if time.Duration(f.sawTimeout.Load()) != 200*time.Millisecond {
		t.Errorf("collect.Options.Timeout = %v, want the host timeout", time.Duration(f.sawTimeout.Load()))
	}
	for _, line := range []string{"collecting netns:h1…", "[5/5] ", "netns:down: unreachable: ", "collected netns:h3 in "} {
		if !strings.Contains(progress.String(), line) {
			t.Errorf("progress lacks %q:\n%s", line, progress.String())
		}
	}
}

func TestCollectBoundsConcurrency(t *testing.T) {
	var specs []string
	for _, c := range "abcdefghijklmnopqrst" {
		specs = append(specs, "netns:"+string(c))
	}
	for _, limit := range []int{1, 3, 8} {
		f := &fakeCollect{}
		snaps, missing, err := Collect(context.Background(), hostsOf(specs...), Options{Concurrency: limit, collect: f.collect})
		if err != nil || len(snaps) != len(specs) || len(missing) != 0 {
			t.Fatalf("limit %d: %d snaps, %v unreachable, err %v", limit, len(snaps), missing, err)
		}
		if p := int(f.peak.Load()); p > limit || p < 1 {
			t.Errorf("limit %d: %d collections ran at once", limit, p)
		}
		if limit > 1 && int(f.peak.Load()) == 1 {
			t.Errorf("limit %d: hosts were collected one at a time", limit)
		}
	}
}

// A collector that ignores its context still cannot hold the run past the
// host timeout.
func TestCollectTimeoutWithoutContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := func(context.Context, target.Target, collect.Options) (*facts.Snapshot, error) {
		<-release
		return nil, errors.New("late")
	}
	start := time.Now()
	_, missing, err := Collect(context.Background(), hostsOf("netns:x"), Options{HostTimeout: 50 * time.Millisecond, collect: stuck})
	if err != nil || len(missing) != 1 || !strings.Contains(missing[0].Error, "no answer within 50ms") {
		t.Fatalf("missing %v, err %v", missing, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
}

// Ctrl-C ends the whole run with the context's error.
func TestCollectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeCollect{}
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	_, _, err := Collect(ctx, hostsOf("netns:hang", "netns:hang2"), Options{collect: func(ctx context.Context, t target.Target, o collect.Options) (*facts.Snapshot, error) {
		<-ctx.Done()
		return f.collect(ctx, t, o)
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestHostsRejectsBadSpec(t *testing.T) {
	if _, err := Hosts([]string{"local", "telnet:x"}); err == nil || !strings.Contains(err.Error(), "telnet:x") {
		t.Errorf("err = %v", err)
	}
}

// A host made from a target already open is collected through that very
// target (doctor's ends keep the ssh settings they were opened with), not
// one opened again from its spec.
func TestCollectKeepsAnOpenTarget(t *testing.T) {
	end := targettest.New("ssh:admin@gw.example")
	var saw target.Target
	_, missing, err := Collect(context.Background(), []Host{HostOf(end)}, Options{collect: func(_ context.Context, t target.Target, _ collect.Options) (*facts.Snapshot, error) {
		saw = t
		return &facts.Snapshot{}, nil
	}})
	if err != nil || len(missing) > 0 {
		t.Fatalf("err %v, missing %v", err, missing)
	}
	if saw != target.Target(end) {
		t.Errorf("collected %v (%T), want the open target itself", saw, saw)
	}
}
