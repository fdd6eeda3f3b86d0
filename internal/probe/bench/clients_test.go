package bench

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// recordedClients are three iperf3 clients run at once in the lab (-P 50,
// -t 2 -O 1, a server port each), each with its process's end.
func recordedClients(t *testing.T) []iperf.Outcome {
	t.Helper()
	ends := map[string]time.Time{}
	sc := bufio.NewScanner(testutil.OpenTestdata(t, "probe", "iperf", "clients", "ends.txt"))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		secs, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		ends[f[0]] = time.Unix(0, int64(secs*1e9))
	}
	var outs []iperf.Outcome
	for _, port := range []string{"5401", "5402", "5403"} {
		res, err := iperf.Parse(testutil.OpenTestdata(t, "probe", "iperf", "clients", "client-"+port+".json"))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, iperf.Outcome{Result: res, Ended: ends[port]})
	}
	return outs
}

func clientTargets3() []target.Target {
	return []target.Target{target.Netns("wgl-demo-a"), target.Netns("wgl-demo-c1"), target.Netns("wgl-demo-c2")}
}

// The recorded clients' 2 s runs did not overlap (5403 ended 1.8 s before
// the others began measuring): their sum, 1,575 Mbit/s, was never carried
// at once, so no aggregate is claimed.
func TestClientsRunNeedsTheirSecondsToOverlap(t *testing.T) {
	run := clientsRun(Upload, clientTargets3(), 5401, 50, recordedClients(t))
	if run.Mbit != 0 || run.OverlapSecs != 0 || !strings.Contains(run.Note, "no aggregate") {
		t.Errorf("run %+v, want no aggregate and a note", run)
	}
	if run.Connections != 150 || run.Clients[2].Port != 5403 || math.Round(run.Clients[2].Mbit) != 808 {
		t.Errorf("clients %+v", run.Clients)
	}
	var text bytes.Buffer
	m := &ManyClients{Addr: "10.77.0.2", Clients: 3, Streams: 50, Omit: 1, Seconds: 2, Runs: []ClientsRun{run}}
	if err := m.WriteText(&text); err != nil || !strings.Contains(text.String(), "no aggregate") {
		t.Errorf("text %q (%v)", text.String(), err)
	}
}

// Had they ended at once, every client's last 1.93 s (the shortest measured
// phase) overlap: the aggregate is each one's rate over them.
func TestClientsRunAggregatesTheOverlap(t *testing.T) {
	outs := recordedClients(t)
	end := outs[0].Ended
	for i := range outs {
		outs[i].Ended = end
	}
	outs = append(outs, iperf.Outcome{Err: errors.New("iperf3: connection refused"), Ended: end})
	clients := append(clientTargets3(), target.Netns("wgl-demo-c3"))
	run := clientsRun(Download, clients, 5401, 50, outs)
	if math.Abs(run.OverlapSecs-1.93) > 0.01 {
		t.Fatalf("overlap %.3f s, want 1.93", run.OverlapSecs)
	}
	sum := 0.0
	for _, c := range run.Clients[:3] {
		if c.WindowMbit <= 0 || c.WindowMbit > 2*c.Mbit {
			t.Errorf("client %+v", c)
		}
		sum += c.WindowMbit
	}
	if run.Mbit != sum || run.Connections != 150 || run.Clients[3].Error == "" || run.Note != "" {
		t.Errorf("run %+v", run)
	}
	// 5403's last 1.93 s are its whole measured phase: its own rate.
	if c := run.Clients[2]; math.Abs(c.WindowMbit-c.Mbit) > 0.02*c.Mbit {
		t.Errorf("5403 over its whole phase %.1f, its run %.1f", c.WindowMbit, c.Mbit)
	}
	if run.Spread <= 0 || run.Spread >= 1 {
		t.Errorf("spread %.2f", run.Spread)
	}
}

// /proc/net/tcp as B's recorded it during a load on ports 5390-5392
// (trimmed): only established sockets on those local ports count, not the
// listening one, not one whose remote port is 5390, not one in TIME_WAIT,
// not another service's.
func TestOpenOn(t *testing.T) {
	procNetTCP := string(testutil.ReadTestdata(t, "collect", "proc", "tcp", "tcp-load-5390-5392"))
	if got := openOn(procNetTCP, []int{5390, 5391, 5392}); got != 3 {
		t.Errorf("open on the load's ports: %d, want 3", got)
	}
	if got := openOn(procNetTCP, []int{22}); got != 1 {
		t.Errorf("open on 22: %d, want 1", got)
	}
	if got := openOn("garbage\n:150E 01", []int{5390}); got != 0 {
		t.Errorf("open in text that is no table: %d", got)
	}
}

// The server's received bytes from the first sample with every connection
// open to the last before one closed: 12.5 MB a second (100 Mbit/s) then,
// the connecting and closing seconds around it left out.
func TestAllOpen(t *testing.T) {
	t0 := time.Unix(1796192560, 0)
	at := func(ms, open int, rx uint64) serverSample {
		return serverSample{at: t0.Add(time.Duration(ms) * time.Millisecond), open: open, rx: rx}
	}
	samples := []serverSample{at(0, 40, 0), at(250, 120, 50e6), at(500, 153, 60e6), at(1500, 153, 72.5e6), at(2500, 153, 85e6), at(2750, 100, 200e6), at(3000, 153, 300e6)}
	from, to, mbit, ok := allOpen(samples, 153)
	if !ok || !from.Equal(t0.Add(500*time.Millisecond)) || !to.Equal(t0.Add(2500*time.Millisecond)) || math.Abs(mbit-100) > 0.01 {
		t.Errorf("all open %s..%s at %.2f Mbit/s (%v), want 0.5..2.5 s at 100", from.Sub(t0), to.Sub(t0), mbit, ok)
	}
	if _, _, _, ok := allOpen(samples[:3], 153); ok {
		t.Error("one sample with all open gave a rate")
	}
	if _, _, _, ok := allOpen(samples, 154); ok {
		t.Error("a client that never connected: all open anyway")
	}
}
