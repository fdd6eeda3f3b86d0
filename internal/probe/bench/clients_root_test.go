package bench

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestManyClientsInTheLab loads B through the tunnel from A and two clients
// behind it at once, 50 streams each: 150 connections, each client against
// its own iperf3 server. The clients start together (their servers held
// until every client's streams are open): by their own recorded intervals,
// each placed by its process's end, they measure at once for at least half
// of their 4 s runs (3.89, 3.92 and 2.46 s of 4 in three runs on a machine
// at a load of 15), where started free they began 2 to 3.5 s apart (the
// first one's load queued the others' connections) and needed 8 s runs for
// a second together. Every client
// carries its share, and the aggregate is what B's WireGuard interface
// received over the seconds all were open after the hold. About 40 s.
func TestManyClientsInTheLab(t *testing.T) {
	const startSkew = 2 * time.Second
	l := labtest.Up(t, lab.Config{Name: "upclient", Clients: 2, Underlay: lab.Shape{RateMbit: 100}})
	c := Config{Client: l.Target("a"), Server: l.Target("b"), TunnelAddr: l.Node("b").TunnelAddr, ServerInterface: l.WGInterface("b"), Parallel: 50, Omit: 1, Seconds: 4, Port: 5390}
	for _, n := range l.ClientNodes() {
		c.Clients = append(c.Clients, l.Target(n))
	}
	m, err := MeasureClients(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if m.Clients != 3 || m.Streams != 50 || len(m.Runs) != 1 || !m.Complete {
		t.Fatalf("load %+v", m)
	}
	for _, r := range m.Runs {
		sum := 0.0
		for i, cr := range r.Clients {
			if cr.Error != "" || cr.Mbit <= 0 || cr.Streams != 50 || cr.Port != 5390+i {
				t.Errorf("%s: client %+v", r.Direction, cr)
			}
			sum += cr.WindowMbit
		}
		if r.Connections != 150 || (r.OverlapSecs > 0 && r.From != "server") {
			t.Errorf("%s: %d connections, aggregate %.1f from %q", r.Direction, r.Connections, r.Mbit, r.From)
		}
		// The clients' measured seconds, each placed by its process's end:
		// together for all but startSkew of their runs.
		if !r.Together || r.ClientsOverlapSecs < float64(c.Seconds)-startSkew.Seconds() {
			t.Errorf("%s: started together %v, measured at once for %.2f s of %d: want all but %s", r.Direction, r.Together, r.ClientsOverlapSecs, c.Seconds, startSkew)
		}
		if r.OverlapSecs < 1 || r.Mbit <= 0 || r.Note != "" {
			t.Errorf("%s: overlap %.1f s, aggregate %.1f, note %q: want the aggregate of a second or more all clients measured together", r.Direction, r.OverlapSecs, r.Mbit, r.Note)
		}
		t.Logf("%s: %.1f Mbit/s (from the %s) over the %.1f s all %d connections ran at once (the clients measured together for %.2f s), clients' shares %.1f / %.1f / %.1f (%.1f in all; whole runs %.1f / %.1f / %.1f)",
			r.Direction, r.Mbit, r.From, r.OverlapSecs, r.Connections, r.ClientsOverlapSecs, r.Clients[0].WindowMbit, r.Clients[1].WindowMbit, r.Clients[2].WindowMbit, sum,
			r.Clients[0].Mbit, r.Clients[1].Mbit, r.Clients[2].Mbit)
	}
	// A client named twice is one host, not two.
	c.Clients = []target.Target{l.Target("a")}
	if _, err := MeasureClients(context.Background(), c); err == nil {
		t.Error("the same client twice was accepted")
	}
}
