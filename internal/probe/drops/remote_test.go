//go:build !router

package drops

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// servingHost is an ssh host whose wgperf serves sampler (or is missing).
type servingHost struct {
	target.Target
	sampler Sampler
	out     string // what it prints instead, when set
}

func (h servingHost) String() string { return "ssh:root@router" }

func (h servingHost) Stream(ctx context.Context, stdin io.Reader, stdout, _ io.Writer, name string, args ...string) error {
	if name != "wgperf" || strings.Join(args, " ") != "drops --serve" {
		return &target.Error{Target: h.String(), Command: name, Err: target.ErrNotFound}
	}
	if h.out != "" {
		_, err := io.WriteString(stdout, h.out)
		return err
	}
	if h.sampler == nil {
		return &target.Error{Target: h.String(), Command: name, Err: target.ErrNotFound}
	}
	return serve(ctx, stdin, stdout, h.sampler)
}

type fixedSampler struct{ snap Snapshot }

func (f fixedSampler) Status() Status {
	return Status{Host: "local", Tier: TierTracepoint, Scope: "network namespace 4026531840"}
}
func (f fixedSampler) Snapshot(context.Context) (Snapshot, error) { return f.snap, nil }
func (f fixedSampler) Close() error                               { return nil }

func TestRemoteSampler(t *testing.T) {
	ctx := context.Background()
	want := Snapshot{Counts: []Count{{Reason: "SOCKET_RCVBUFF", Function: "__udp_enqueue_schedule_skb", Interface: "eth0", Packets: 42}}}
	s := ForTarget(ctx, servingHost{sampler: fixedSampler{want}})
	defer s.Close()
	if st := s.Status(); st.Tier != TierTracepoint || st.Host != "ssh:root@router" {
		t.Fatalf("status = %+v", st)
	}
	for range 2 {
		got, err := s.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Counts) != 1 || got.Counts[0] != want.Counts[0] {
			t.Errorf("snapshot = %+v", got)
		}
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}

	missing := ForTarget(ctx, servingHost{})
	if st := missing.Status(); st.Tier != TierNone || !strings.Contains(st.Why, "wgperf is not installed on ssh:root@router") {
		t.Errorf("without wgperf: %+v", st)
	}
	none := ForTarget(ctx, servingHost{out: `{"host":"x","tier":"none","why":"this build of wgperf carries no drop sampler"}` + "\n"})
	if st := none.Status(); st.Tier != TierNone || !strings.Contains(st.Why, "carries no drop sampler") {
		t.Errorf("router build there: %+v", st)
	}
	bad := ForTarget(ctx, servingHost{out: `{"tier":"root"}` + "\n"})
	if st := bad.Status(); st.Tier != TierNone || !strings.Contains(st.Why, "tier") {
		t.Errorf("a bad tier: %+v", st)
	}
}

func TestParseSnapshotRefusesForeignText(t *testing.T) {
	for _, line := range []string{
		`{"counts":[{"reason":"NO_SOCKET\u001b[31m","packets":1}]}`,
		`{"counts":[{"reason":"NO_SOCKET","function":"rm -rf /","packets":1}]}`,
		`{"counts":[{"reason":"NO_SOCKET","interface":"eth0; reboot","packets":1}]}`,
		`{"counts":[{"reason":"NO_SOCKET","packets":-1}]}`,
		`not json`,
	} {
		if _, err := ParseSnapshot([]byte(line)); err == nil {
			t.Errorf("accepted %s", line)
		}
	}
	ok := `{"counts":[{"reason":"reason 0x10002","function":"ovs_dp_process_packet","interface":"ifindex 7","packets":3}],"lost":2}`
	if s, err := ParseSnapshot([]byte(ok)); err != nil || s.Lost != 2 {
		t.Errorf("ParseSnapshot(%s) = %+v, %v", ok, s, err)
	}
	st, err := ParseStatus([]byte(`{"tier":"btf","why":"a\u001b]0;x\u0007b"}`))
	if err != nil || strings.ContainsAny(st.Why, "\x1b\x07") {
		t.Errorf("ParseStatus kept a control character: %q, %v", st.Why, err)
	}
}

// stuckSampler answers its status, then never a snapshot: a remote wgperf
// whose host stalled.
type stuckSampler struct{ fixedSampler }

func (stuckSampler) Snapshot(ctx context.Context) (Snapshot, error) {
	<-ctx.Done()
	return Snapshot{}, ctx.Err()
}

// TestRemoteSamplerThatStopsAnswering: a silent remote costs one bounded
// wait, then says so in its status; it never hangs its caller, and a
// cancelled context ends a wait at once.
func TestRemoteSamplerThatStopsAnswering(t *testing.T) {
	defer func(d time.Duration) { AnswerTimeout = d }(AnswerTimeout)
	AnswerTimeout = 300 * time.Millisecond
	ctx := context.Background()

	s := ForTarget(ctx, servingHost{sampler: stuckSampler{}})
	start := time.Now()
	if _, err := s.Snapshot(ctx); err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("snapshot of a silent sampler: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("waited %s for a silent sampler", waited)
	}
	if st := s.Status(); st.Tier != TierNone || !strings.Contains(st.Why, "stopped answering") {
		t.Errorf("status after it stopped answering: %+v", st)
	}
	if _, err := s.Snapshot(ctx); err == nil {
		t.Error("a second snapshot of a given-up sampler succeeded")
	}
	s.Close()

	AnswerTimeout = time.Hour
	s = ForTarget(ctx, servingHost{sampler: stuckSampler{}})
	defer s.Close()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := s.Snapshot(cctx); err == nil {
		t.Error("snapshot after its context ended succeeded")
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("a cancelled snapshot waited %s", waited)
	}
}
