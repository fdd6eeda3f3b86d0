package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
)

// ssRecorded reads an ss -tin output recorded in the lab (testdata/collect/ss).
func ssRecorded(t *testing.T, name string) []facts.TCPSocket {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "collect", "ss", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	socks, err := parse.ParseSSTCPInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	return socks
}

// tcpRun is a single-stream tunnel upload of mbit whose ends' ss read the
// recorded outputs of case name (client: the sender, server: the
// receiver), with the ends' tcp_rmem and tcp_wmem as given.
func tcpRun(t *testing.T, name string, mbit float64, rmem, wmem []int64) Run {
	run := run(PathTunnel, Upload, 1, synthetic(mbit, mbit, mbit))
	run.TCP = FlowState([][]facts.TCPSocket{ssRecorded(t, "tin-"+name+"-sender.txt")}, [][]facts.TCPSocket{ssRecorded(t, "tin-"+name+"-receiver.txt")}, nil)
	run.Client.TCPRmem, run.Client.TCPWmem = rmem, wmem
	run.Server.TCPRmem, run.Server.TCPWmem = rmem, wmem
	return run
}

var (
	labRmem = []int64{4096, 131072, 6291456} // the lab's namespaces' defaults
	labWmem = []int64{4096, 16384, 4194304}
)

func TestTCPLimits(t *testing.T) {
	// The lab: 100 Mbit/s shaped, 10 ms each way (the idle tunnel round trip 21 ms).
	underlay := run(PathUnderlay, Upload, 1, synthetic(95, 95, 95))
	idle := &Latency{Tunnel: &RTT{Sent: 10, Received: 10, MinMs: 20.5, MedianMs: 21, MaxMs: 22}}
	for _, c := range []struct {
		name     string
		run      Run
		want     string   // the finding's ids, "" for none
		say      []string // in its title and evidence
		note     string   // in the run's note
		fixKey   string
		fixValue string
		also     []Run // the underlay runs, when not the single stream at 95 Mbit/s
	}{
		{name: "healthy", run: tcpRun(t, "healthy", 95, labRmem, labWmem), note: "mss 1368 of 1380 the route allows, cwnd 544 segments"},
		{name: "rwnd", run: tcpRun(t, "rwnd", 54, []int64{4096, 131072, 262144}, labWmem),
			want: "warning tcp.buffers-small@netns:b", say: []string{"receive window 157K", "37%", "net.ipv4.tcp_rmem max 256K", "BDP 243K (95 Mbit/s the path carried upload × 21 ms)", "rate the receive window allows (window / round trip) 61.4 Mbit/s >= 95 Mbit/s", "4096 131072 262144"},
			note: "receive window 37%", fixKey: "net.ipv4.tcp_rmem", fixValue: "4096 131072 1048576"},
		// The same flow on a host whose tcp_rmem would allow more: not the sysctl's doing.
		{name: "rwnd, tcp_rmem large", run: tcpRun(t, "rwnd", 54, labRmem, labWmem), note: "receive window 37%"},
		// Where the underlay's one stream is held the same way, its streams together show the path.
		{name: "rwnd, in the underlay too", run: tcpRun(t, "rwnd", 54, []int64{4096, 131072, 262144}, labWmem),
			also: []Run{run(PathUnderlay, Upload, 1, synthetic(54, 54, 54)), run(PathUnderlay, Upload, 4, synthetic(95, 95, 95))},
			want: "warning tcp.buffers-small@netns:b", say: []string{"receive window 157K"}, note: "receive window 37%",
			fixKey: "net.ipv4.tcp_rmem", fixValue: "4096 131072 1048576"},
		{name: "rwnd, the path's rate unknown", run: tcpRun(t, "rwnd", 54, []int64{4096, 131072, 262144}, labWmem),
			also: []Run{run(PathUnderlay, Upload, 1, synthetic(54, 54, 54))}, note: "receive window 37%"},
		{name: "sndbuf", run: tcpRun(t, "sndbuf", 40, labRmem, []int64{4096, 16384, 131072}),
			want: "warning tcp.buffers-small@netns:a", say: []string{"send buffer", "72%", "tcp_wmem max 128K", "sndbuf_limited", "rate the send buffer allows (tcp_wmem max / round trip) 49.9 Mbit/s"},
			note: "send buffer 72%", fixKey: "net.ipv4.tcp_wmem", fixValue: "4096 16384 1048576"},
		{name: "mss", run: tcpRun(t, "mss", 72, labRmem, labWmem), note: "segments of 524 bytes where the route's MTU 1420 allows 1380"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := report(c.run, underlay)
			if c.also != nil {
				r = report(append([]Run{c.run}, c.also...)...)
			}
			r.IdleLatency = idle
			Analyze(r)
			var fs []finding.Finding
			for _, f := range r.Findings {
				if f.ID == catalog.TCPBuffersSmall {
					fs = append(fs, f)
				}
			}
			if got := ids(fs); got != c.want {
				t.Fatalf("findings %q, want %q", got, c.want)
			}
			if note := strings.Join(r.Runs[0].Notes, "; "); !strings.Contains(note, c.note) {
				t.Errorf("note %q lacks %q", note, c.note)
			}
			if len(fs) == 0 {
				return
			}
			f := fs[0]
			text := f.Title
			for _, e := range f.Evidence {
				text += " | " + e.Key + " " + e.Value + " " + e.Threshold
			}
			for _, s := range c.say {
				if !strings.Contains(text, s) {
					t.Errorf("%q lacks %q", text, s)
				}
			}
			if len(f.Fixes) != 1 || f.Fixes[0].Action == nil || f.Fixes[0].Action.Params["key"] != c.fixKey || f.Fixes[0].Action.Params["value"] != c.fixValue {
				t.Errorf("fixes %+v, want %s = %s", f.Fixes, c.fixKey, c.fixValue)
			}
		})
	}
}

func TestFlowState(t *testing.T) {
	// Two reads of the client: the control connection is left out, the
	// data flow counted twice and kept as the last read saw it.
	first := ssRecorded(t, "tin-healthy-sender.txt")
	later := ssRecorded(t, "tin-healthy-sender.txt")
	later[1].BytesAcked += 1 << 20
	st := FlowState([][]facts.TCPSocket{first, later}, nil, []string{"ss is not installed on netns:b"})
	if len(st.Flows) != 1 || st.Flows[0].Samples != 2 || st.Flows[0].BytesAcked != first[1].BytesAcked+1<<20 || st.Flows[0].Role != "sender" || st.Flows[0].End != "client" {
		t.Fatalf("flows %+v", st.Flows)
	}
	rev := FlowState(nil, [][]facts.TCPSocket{ssRecorded(t, "tin-reverse-server.txt")}, nil)
	if len(rev.Flows) != 1 || rev.Flows[0].Role != "sender" || rev.Flows[0].End != "server" {
		t.Errorf("download: %+v", rev.Flows)
	}
	if FlowState(nil, nil, nil) != nil {
		t.Errorf("nothing read: want no state")
	}
	missing := Run{Spec: Spec{Path: PathTunnel, Direction: Upload, Streams: 1}, TCP: FlowState(nil, nil, []string{"ss is not installed on netns:a (BusyBox has none; install iproute2): its TCP flows were not read"})}
	if n := tcpNote(&missing); !strings.Contains(n, "ss is not installed") {
		t.Errorf("note %q", n)
	}
}
