package iperf

import (
	"context"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// MaxStreams is the most streams iperf3 opens in one client (-P): more
// connections take more clients.
const MaxStreams = 128

// Outcome is one client's test of RunMany, and when its process ended by
// this machine's clock: the clients' tests start apart (a client whose
// streams connected first loads the path while the others still connect:
// 2 to 3.5 s apart for 3 × 50 streams in the lab), so their seconds are
// placed on one clock by their ends (Window).
type Outcome struct {
	Result *Result
	Err    error
	Ended  time.Time
}

// RunMany runs test t from every client at once against server: client i
// against a server process of its own on t.Port+i, since an iperf3 server
// serves one test at a time. Every server listens before any client starts:
// several clients loading one server, as a hub's do. out[i] is client i's;
// err is a server that could not start (none runs then).
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
		if servers[i], err = startServer(ctx, server, t.Port+i, t.Omit+t.Seconds+30, t.Clock, !t.Checked && i == 0); err != nil {
			return nil, err
		}
	}
	out = make([]Outcome, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ct := t
			ct.Port = t.Port + i
			res, err := runClient(ctx, c, server, servers[i], ct)
			out[i] = Outcome{Result: res, Err: err, Ended: time.Now()}
		}()
	}
	wg.Wait()
	return out, nil
}
