package iperf

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// MaxStreams is the most streams iperf3 opens in one client (-P): more
// connections take more clients.
const MaxStreams = 128

// Outcome is one client's test of RunMany, and when its process ended by
// this machine's clock, which places its seconds beside the others'.
type Outcome struct {
	Result *Result
	Err    error
	Ended  time.Time
	// Released is when the servers went on after holding every client until
	// all its streams were open (RunMany): the clients started together
	// then. Zero: they were not held, or not until every client's were.
	Released time.Time
}

// RunMany runs test t from every client at once against server: client i
// against a server process of its own on t.Port+i, since an iperf3 server
// serves one test at a time. Every server listens before any client starts:
// several clients loading one server, as a hub's do. out[i] is client i's;
// err is a server that could not start (none runs then).
//
// The clients of a TCP test start together: a stopped server (SIGSTOP) still
// has its connections opened by the kernel, into its backlog, and an iperf3
// server starts its client's test only once it has taken every stream. So
// each server is stopped once it listens; when every client's control
// connection is open, the servers are stepped (let go on for 10 ms at a
// time) until each one's client has begun to open its streams, and stopped
// again; when every client's streams are open, all go on at once (SIGCONT,
// one command), take their streams and start their tests together. Started
// free, the first client whose streams had connected loaded the path while
// the others' connections, one round trip each, waited behind its queue:
// 2 to 3.5 s apart in the lab; held only until the control connections
// were open, their streams still raced (0.1 s apart in one run, never at
// once in the next). A server host that does not show its sockets is not
// held (nothing would say when to go on), nor a UDP test.
func RunMany(ctx context.Context, clients []target.Target, server target.Target, t Test) (out []Outcome, err error) {
	if t.Port == 0 {
		t.Port = DefaultPort
	}
	if t.Seconds <= 0 {
		t.Seconds = 10
	}
	servers := make([]*Server, len(clients))
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.Stop()
			}
		}
	}()
	for i := range clients {
		if servers[i], err = startServer(ctx, server, t.Port+i, t.Omit+t.Seconds+30, t.Clock, !t.Checked && i == 0, true); err != nil {
			return nil, err
		}
	}
	gate := &serverGate{target: server}
	if t.UDPMbit == 0 {
		gate = holdServers(ctx, server, servers, max(t.Parallel, 1))
	}
	defer gate.release()
	out = make([]Outcome, len(clients))
	done := make([]atomic.Bool, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer done[i].Store(true)
			ct := t
			ct.Port = t.Port + i
			res, err := runClient(ctx, c, server, servers[i], ct)
			out[i] = Outcome{Result: res, Err: err, Ended: time.Now()}
		}()
	}
	held := gate.wait(ctx, func(i int) bool { return done[i].Load() })
	gate.release()
	released := time.Now()
	wg.Wait()
	for i := range out {
		if held {
			out[i].Released = released
		}
	}
	return out, nil
}

// holdMax is the longest the servers are held, all steps together: a
// client connects within ConnectTimeout or fails, and its streams follow
// within round trips. Past it they go on, and the run is not together.
const holdMax = ConnectTimeout + 2*time.Second

// releaseWait bounds the command that lets the servers go on.
const releaseWait = 10 * time.Second

// serverGate is RunMany's servers, stopped on their host.
type serverGate struct {
	target  target.Target
	ports   []int
	pids    []string
	streams int // each client's
	once    sync.Once
	stopped bool
}

// holdServers stops every server, each of whose clients opens streams
// connections besides its control connection; the gate holds none when
// one's process id is unknown or its host does not show its sockets.
func holdServers(ctx context.Context, t target.Target, servers []*Server, streams int) *serverGate {
	g := &serverGate{target: t, streams: streams}
	for _, s := range servers {
		pid := s.remotePid()
		if pid == 0 || !s.listens {
			return &serverGate{target: t}
		}
		g.ports, g.pids = append(g.ports, s.port), append(g.pids, strconv.Itoa(pid))
	}
	if _, err := t.Run(ctx, "sh", "-c", stopScript(g.pids, orphanRelease)); err != nil {
		g.stopped = true // some may be: release them all
		g.release()
		return &serverGate{target: t}
	}
	g.stopped = true
	return g
}

// orphanRelease is when a held server's own host lets it go on if wgperf
// did not (killed, or its connection to the host lost): after the longest
// hold and its release, so never within a run that held it. A stopped
// iperf3 would otherwise keep its port for good: its idle timeout does not
// run while it is stopped.
const orphanRelease = holdMax + releaseWait

// stopScript stops the processes pids and leaves behind, on their host, a
// release of them after orphanAfter (whole seconds, at least one).
func stopScript(pids []string, orphanAfter time.Duration) string {
	list := strings.Join(pids, " ")
	secs := max(1, int(math.Ceil(orphanAfter.Seconds())))
	return fmt.Sprintf("kill -STOP %s || exit 1; (sleep %d; kill -CONT %s) >/dev/null 2>&1 &", list, secs, list)
}

// stepPulse is how long a stepped server runs at a time: a few of its
// client's round trips. A server whose client opened all its streams
// within one step may take them all and start before the others.
const stepPulse = "0.01"

// wait holds the servers until every client's streams are open, and says
// whether they all were; it gives up on a client that gave is true of (it
// is done: it could not connect), and on all of them after holdMax.
func (g *serverGate) wait(ctx context.Context, gave func(i int) bool) (held bool) {
	if !g.stopped {
		return false
	}
	deadline := time.Now().Add(holdMax)
	// Every control connection.
	if !g.until(ctx, deadline, gave, 1) {
		return false
	}
	// Each server stepped until its client begins to open its streams:
	// the server has read its parameters and asked for them.
	for {
		open := g.open(ctx)
		var step []string
		for i, p := range g.ports {
			if open[p] < 2 && !gave(i) {
				step = append(step, g.pids[i])
			}
		}
		if len(step) == 0 {
			break
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		list := strings.Join(step, " ")
		_, _ = g.target.Run(ctx, "sh", "-c", "kill -CONT "+list+"; sleep "+stepPulse+"; kill -STOP "+list)
	}
	// Every stream.
	return g.until(ctx, deadline, gave, g.streams+1)
}

// until waits until every port has want established connections, or its
// client gave up; true when every port had them.
func (g *serverGate) until(ctx context.Context, deadline time.Time, gave func(i int) bool, want int) bool {
	for ctx.Err() == nil && time.Now().Before(deadline) {
		open := g.open(ctx)
		all, settled := true, true
		for i, p := range g.ports {
			if open[p] < want {
				all = false
				settled = settled && gave(i)
			}
		}
		if all || settled {
			return all
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// open is the server host's established connections by local port.
func (g *serverGate) open(ctx context.Context) map[int]int {
	return openPerPort(collect.ReadFiles(ctx, g.target, "/proc/net/tcp", "/proc/net/tcp6"))
}

// release lets the servers go on, all in one command; once.
func (g *serverGate) release() {
	g.once.Do(func() {
		if g.stopped {
			// Not the run's context: a cancelled run still lets its servers go.
			ctx, cancel := context.WithTimeout(context.Background(), releaseWait)
			defer cancel()
			_, _ = g.target.Run(ctx, "sh", "-c", "kill -CONT "+strings.Join(g.pids, " "))
		}
	})
}

// openPerPort counts the established TCP connections of the tables by
// local port.
func openPerPort(tables map[string][]byte) map[int]int {
	n := map[int]int{}
	for _, b := range tables {
		socks, _ := parse.ParseProcNetTCP(strings.NewReader(string(b)), parse.TCPEstablished)
		for _, s := range socks {
			n[s.LocalPort]++
		}
	}
	return n
}
