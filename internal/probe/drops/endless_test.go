//go:build !router

package drops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// endlessSSH makes every ssh target a host whose commands print one line
// that never ends, through the real ssh path of target (Stream, its pipes).
func endlessSSH(t *testing.T) target.Target {
	t.Helper()
	oldCmd := target.SSHCommand
	target.SSHCommand = []string{"sh", "-c", "while :; do printf '%s' xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done", "endless-ssh"}
	t.Cleanup(func() { target.SSHCommand = oldCmd })
	tg, err := target.ParseWith("ssh:root@endless", target.HostSSH{Conns: target.SSHConns{Own: true}})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// within runs f and fails t if it has not returned after d: the liveness
// bound of a call that used to never return (not a speed figure).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still running after %s", what, d)
	}
}

// TestRemoteSamplerPrintingOneEndlessLine is issue 55's hole 3: a remote
// sampler that prints one line without end used to hang its caller for
// ever (the reader gave up at 2 MiB without closing its pipe, so the stream
// never ended), ignoring SIGTERM. Now the sampler is refused with why, the
// way bench, doctor and the exporter open it (ForTarget), and a cancelled
// context (SIGTERM) ends the wait too.
func TestRemoteSamplerPrintingOneEndlessLine(t *testing.T) {
	tg := endlessSSH(t)
	within(t, 30*time.Second, "opening an endless sampler", func() {
		s := ForTarget(context.Background(), tg)
		defer s.Close()
		if st := s.Status(); st.Tier != TierNone || !strings.Contains(st.Why, "longer than") {
			t.Errorf("status of an endless sampler: %+v", st)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel) // SIGTERM while it prints
	defer cancel()
	within(t, 30*time.Second, "opening an endless sampler, cancelled", func() {
		if s, err := OpenRemote(ctx, tg); err == nil {
			s.Close()
			t.Error("an endless sampler opened")
		}
	})
}
