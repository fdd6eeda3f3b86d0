package iperf

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// scriptedClient answers "iperf3 -c" with recorded outputs in turn and
// "iperf3 --version" with success.
type scriptedClient struct {
	target.Target
	outputs [][]byte
	calls   int
}

func (c *scriptedClient) String() string { return "netns:client" }
func (c *scriptedClient) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	if len(args) > 0 && args[0] == "--version" {
		return []byte("iperf 3.12\n"), nil
	}
	out := c.outputs[min(c.calls, len(c.outputs)-1)]
	c.calls++
	return out, &target.Error{Target: c.String(), Command: name, ExitCode: 1}
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

	c := &scriptedClient{outputs: [][]byte{refused, refused, ok}}
	res, err := runClient(context.Background(), c, target.Local(), srv, Test{Addr: "10.77.0.2", Seconds: 1})
	if err != nil || res == nil || c.calls != 3 {
		t.Fatalf("after two refusals: calls %d, err %v", c.calls, err)
	}

	// Once the server has exited, a refusal is final at once.
	_ = proc.Stop(time.Second)
	c = &scriptedClient{outputs: [][]byte{refused}}
	_, err = runClient(context.Background(), c, target.Local(), srv, Test{Addr: "10.77.0.2", Seconds: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the iperf3 server") || c.calls != 1 {
		t.Errorf("server gone: calls %d, err %v", c.calls, err)
	}
}
