package iperf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// scriptedClient answers "iperf3 -c" with recorded outputs in turn, each
// with iperf3's failing exit, and "iperf3 --version" with success; calls
// counts the "-c" runs.
func scriptedClient(outputs ...[]byte) (h *targettest.Host, calls *int) {
	h, calls = targettest.New("netns:client"), new(int)
	h.On("iperf3 --version", "iperf 3.12\n")
	h.Fallback = func(string) (targettest.Answer, bool) {
		out := outputs[min(*calls, len(outputs)-1)]
		*calls++
		return targettest.Answer{Out: string(out), Code: 1}, true
	}
	return h, calls
}

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "iperf", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A server started over ssh may not listen yet when the client first dials:
// while its process runs, a refused connection is dialled again.
func TestClientRetriesWhileServerStarts(t *testing.T) {
	proc, err := target.Local().Start(context.Background(), "sleep", "30")
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop(time.Second)
	srv := &Server{target: target.Local(), port: DefaultPort, proc: proc}
	refused, ok := recorded(t, "error-refused.json"), recorded(t, "tcp-upload.json")

	c, calls := scriptedClient(refused, refused, ok)
	res, err := runClient(context.Background(), c, target.Local(), srv, Test{Addr: "10.77.0.2", Seconds: 1})
	if err != nil || res == nil || *calls != 3 {
		t.Fatalf("after two refusals: calls %d, err %v", *calls, err)
	}

	// Once the server has exited, a refusal is final at once.
	_ = proc.Stop(time.Second)
	c, calls = scriptedClient(refused)
	_, err = runClient(context.Background(), c, target.Local(), srv, Test{Addr: "10.77.0.2", Seconds: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the iperf3 server") || *calls != 1 {
		t.Errorf("server gone: calls %d, err %v", *calls, err)
	}
	// The refusal is typed: a bench says its baseline was blocked and where.
	var ue *UnreachableError
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &ue) || ue.Where != "10.77.0.2:5299" || !strings.Contains(ue.Why, "refused") {
		t.Errorf("server gone: err %#v, want an UnreachableError at 10.77.0.2:5299, refused", err)
	}
}

// A bench checks both ends once (Check) and marks its runs Checked: a run
// then asks no "iperf3 --version" of its client, one command (over ssh a
// round trip) less per run; an unchecked run still asks.
func TestCheckedRunAsksNoVersion(t *testing.T) {
	proc, err := target.Local().Start(context.Background(), "sleep", "30")
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop(time.Second)
	srv := &Server{target: target.Local(), port: DefaultPort, proc: proc}
	ok := recorded(t, "tcp-upload.json")
	for _, checked := range []bool{false, true} {
		c, _ := scriptedClient(ok)
		if _, err := runClient(context.Background(), c, target.Local(), srv, Test{Addr: "10.77.0.2", Seconds: 1, Checked: checked}); err != nil {
			t.Fatal(err)
		}
		asked := strings.Contains(strings.Join(c.Ran(), "\n"), "iperf3 --version")
		if asked == checked {
			t.Errorf("checked %v: ran %q", checked, c.Ran())
		}
	}
}
