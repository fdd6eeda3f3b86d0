package bench

import (
	"context"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestManyClientsInTheLab loads B through the tunnel from A and two clients
// behind it at once, 50 streams each: 150 connections, each client against
// its own iperf3 server. Every client carries its share, and the aggregate
// is what B's WireGuard interface received over the seconds all measured at
// once. The clients started 2 to 3.5 s apart on a machine running six other
// jobs (each client's connections wait behind the others' traffic), so each
// runs 8 s: twice that skew still leaves the clients a second together, and
// the aggregate must be there. About 40 s.
func TestManyClientsInTheLab(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "upclient", Clients: 2, Underlay: lab.Shape{RateMbit: 100}})
	c := Config{Client: l.Target("a"), Server: l.Target("b"), TunnelAddr: l.Node("b").TunnelAddr, ServerInterface: l.WGInterface("b"), Parallel: 50, Omit: 1, Seconds: 8, Port: 5390}
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
		if r.OverlapSecs < 1 || r.Mbit <= 0 || r.Note != "" {
			t.Errorf("%s: overlap %.1f s, aggregate %.1f, note %q: want the aggregate of a second or more all clients measured together", r.Direction, r.OverlapSecs, r.Mbit, r.Note)
		}
		t.Logf("%s: %.1f Mbit/s (from the %s) over the %.1f s all %d connections ran at once, clients' shares %.1f / %.1f / %.1f (%.1f in all; whole runs %.1f / %.1f / %.1f)",
			r.Direction, r.Mbit, r.From, r.OverlapSecs, r.Connections, r.Clients[0].WindowMbit, r.Clients[1].WindowMbit, r.Clients[2].WindowMbit, sum,
			r.Clients[0].Mbit, r.Clients[1].Mbit, r.Clients[2].Mbit)
	}
	// A client named twice is one host, not two.
	c.Clients = []target.Target{l.Target("a")}
	if _, err := MeasureClients(context.Background(), c); err == nil {
		t.Error("the same client twice was accepted")
	}
}
