package bench

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
)

// TCPSamples is how many times a tunnel TCP run's flows are read at each
// end: one ss per end a time, which over ssh is a round trip each.
const TCPSamples = 2

// tcpReader reads the bench's own TCP flows with ss on both ends.
type tcpReader struct {
	client, server target.Target
	mu             sync.Mutex
	missing        map[target.Target]string // why ss cannot run on an end, once seen
}

func newTCPReader(c Config) *tcpReader {
	return &tcpReader{client: c.Client, server: c.Server, missing: map[target.Target]string{}}
}

// duringRun reads both ends' flows on port TCPSamples times, spread over
// the run's measured seconds (after its warm-up). The returned func stops
// the samples still to come and returns what was read.
func (t *tcpReader) duringRun(ctx context.Context, port, omit, seconds int) (wait func() *TCPState) {
	if port == 0 {
		port = iperf.DefaultPort
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan *TCPState, 1)
	go func() {
		var client, server [][]facts.TCPSocket
		var notes []string
		start := time.Now()
		for k := 1; k <= TCPSamples; k++ {
			at := time.Duration(omit)*time.Second + time.Duration(k)*time.Duration(seconds)*time.Second/(TCPSamples+1)
			select {
			case <-time.After(time.Until(start.Add(at))):
			case <-ctx.Done():
				done <- FlowState(client, server, notes)
				return
			}
			var wg sync.WaitGroup
			var cs, ss []facts.TCPSocket
			var cerr, serr error
			wg.Add(1)
			go func() { defer wg.Done(); ss, serr = t.read(ctx, t.server, port) }()
			cs, cerr = t.read(ctx, t.client, port)
			wg.Wait()
			if ctx.Err() != nil { // the run ended while ss ran: its flows may be gone
				break
			}
			for _, e := range []struct {
				err   error
				socks []facts.TCPSocket
				into  *[][]facts.TCPSocket
			}{{cerr, cs, &client}, {serr, ss, &server}} {
				if e.err != nil {
					notes = appendOnce(notes, e.err.Error())
				} else {
					*e.into = append(*e.into, e.socks)
				}
			}
		}
		done <- FlowState(client, server, notes)
	}()
	return func() *TCPState { cancel(); return <-done }
}

// read runs ss on one end: the established TCP connections from or to port.
func (t *tcpReader) read(ctx context.Context, on target.Target, port int) ([]facts.TCPSocket, error) {
	t.mu.Lock()
	missing := t.missing[on]
	t.mu.Unlock()
	if missing != "" {
		return nil, fmt.Errorf("%s", missing)
	}
	p := strconv.Itoa(port)
	// No -H: ss before iproute2 4.13 has none, and the parser skips the header.
	out, err := on.Run(ctx, "ss", "-tin", "state", "established", "( sport = :"+p+" or dport = :"+p+" )")
	if target.IsNotFound(err) {
		t.mu.Lock()
		t.missing[on] = fmt.Sprintf("ss is not installed on %s (BusyBox has none; install iproute2): its TCP flows were not read", on)
		t.mu.Unlock()
		return nil, fmt.Errorf("%s", t.missing[on])
	}
	if err != nil {
		return nil, fmt.Errorf("ss on %s: %v", on, err)
	}
	socks, err := parse.ParseSSTCPInfo(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("ss on %s: %v", on, err)
	}
	return socks, nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// tcpBuffers reads a tcp_rmem or tcp_wmem triple ("4096\t131072\t6291456");
// nil when it is not three sizes.
func tcpBuffers(b []byte) []int64 {
	f := bytes.Fields(b)
	if len(f) != 3 {
		return nil
	}
	out := make([]int64, 3)
	for i, x := range f {
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil || n <= 0 {
			return nil
		}
		out[i] = n
	}
	return out
}
