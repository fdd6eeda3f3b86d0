package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A path that polices UDP to a quarter of the link (lab --udp-police 25):
// the tunnel carries 48 of 190 Mbit/s, TCP outside it the whole link, and
// nothing on the hosts explains it (a busy CPU is the lab machine's). Doctor
// offers UDP outside the tunnel in both slow directions, and what that proves
// (the recorded run: 60% lost on the path) ranks first: the cause is the
// path. Before, doctor had no verdict for it.
func TestUDPPolicedRanksFirst(t *testing.T) {
	const a, b = "netns:wgl-fd2-a", "netns:wgl-fd2-b"
	fs, snaps := checked(t, "lab-healthy-a", "lab-healthy-b")
	fs = append(fs, finding.Finding{ID: catalog.CPUSaturated, Severity: finding.Warning, Host: targettest.Spec(a), Title: "CPU 1 98% busy"})
	m := measured(a, b, 48.1, 190.6, 46.3, 190.4)
	plans := PlanProbes(Healthy(fs, m), fs, m, nil, snaps[0])
	if len(plans) != 1 || plans[0].Probe != catalog.ProbeUDPOutside || strings.Join(plans[0].Directions, " ") != "upload download" {
		t.Fatalf("probes %+v, want udp-outside in both directions", plans)
	}
	f, err := os.Open(filepath.Join("..", "..", "testdata", "probe", "iperf", "udp-policed-25pct.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := iperf.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	res := udppath.Analyze(udppath.Config{Client: targettest.New(a), Server: targettest.New(b), Addr: "203.0.113.2",
		Direction: bench.Upload, TCPMbit: m.Up.Underlay}, run, 0)
	causes := Rank(finding.Merge(append(fs, res.Findings...)), m)
	if got := ids(causes); len(got) == 0 || got[0] != string(catalog.PathUDPPoliced)+"@"+a {
		t.Fatalf("ranked %v, want path.udp-policed first", got)
	}
	if causes[0].Command != "" {
		t.Errorf("a path cause has no wgperf fix, got %q", causes[0].Command)
	}
}

// The multi-WAN router's 5G epilogue, in the lab's figures: the tunnel
// carries 1.7 Mbit/s while UDP outside it, on wgperf's port and with
// WireGuard's port number, arrives at the full rate. No policer: doctor's
// verdict is a collapse WireGuard's own packets meet, and path.udp-policed
// is nowhere.
func TestCollapseNoUDPRunReproducesIsWireGuardsOwn(t *testing.T) {
	const a, b = "netns:wgl-h6-a", "netns:wgl-h6-b"
	fs, _ := checked(t, "lab-healthy-a", "lab-healthy-b")
	m := measured(a, b, 1.7, 190.6, 180.2, 190.4)
	c := udppath.Config{Client: targettest.New(a), Server: targettest.New(b), Addr: "203.0.113.2", Direction: bench.Upload, TCPMbit: m.Up.Underlay}
	onPort := c
	onPort.WireGuardPort = 51820
	clean := recordedRun(t, "udp-other-port-190m.json")
	pair := udppath.Pair{Other: udppath.Analyze(c, clean, 0), OnPort: udppath.Analyze(onPort, clean, 0), TunnelMbit: m.Up.Tunnel}
	found := append(fs, udppath.Judge(pair)...)
	causes := Rank(finding.Merge(found), m)
	if got := ids(causes); len(got) == 0 || got[0] != string(catalog.WGSpecificCollapse)+"@"+a {
		t.Fatalf("ranked %v, want wg.specific-collapse first", got)
	}
	for _, f := range found {
		if f.ID == catalog.PathUDPPoliced || f.ID == catalog.PathPortThrottled {
			t.Errorf("a collapse no UDP run reproduces is called %s", f.ID)
		}
	}
	if status(found, m) != StatusSlow {
		t.Errorf("status %s, want slow", status(found, m))
	}
}

func recordedRun(t *testing.T, name string) *iperf.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "probe", "iperf", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := iperf.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// Recorded on the path-cycles lab (--rate 50 --path-cycle 18) before
// capacity was told from a policer: the UDP run outside the tunnel fell in a
// low phase (21.9 of 47.8 Mbit/s arrived, 54% lost) that the bench's upload
// underlay seconds never saw, so path.udp-policed came first. The bench's
// seconds alone cannot clear it; TCP on the path right after the UDP run
// (19.1 Mbit/s, recorded in the same lab's low phase) does.
func TestPathCyclesCapacityIsNoPolicer(t *testing.T) {
	var rec Report
	readJSON(t, &rec, "..", "internal", "doctor", "testdata", "path-cycles.recorded.json")
	outside := ProbeResult[[]*udppath.Result](&rec, udppath.Def)
	if len(outside) != 1 || !outside[0].Policed || rec.Causes[0].Finding.ID != catalog.PathUDPPoliced {
		t.Fatalf("recording: %+v, first %s", outside, rec.Causes[0].Finding.ID)
	}
	up, down := pathLow(rec.Bench, bench.Upload), pathLow(rec.Bench, bench.Download)
	if up < 40 || down > 21 {
		t.Errorf("the bench's lowest underlay seconds: upload %.1f, download %.1f; want the upload's high phase (≥ 40) and the download's low one", up, down)
	}
	u := *outside[0]
	u.PathLowMbit = up
	u.AgainstTCP(0)
	if !u.Policed {
		t.Fatalf("against the bench's upload seconds alone (%.1f): policed %v", up, u.Policed)
	}
	low, err := iperf.Parse(strings.NewReader(mustRead(t, "probe", "iperf", "tcp-path-cycle-low.json")))
	if err != nil {
		t.Fatal(err)
	}
	u.AgainstTCP(low.Mbit())
	if u.Policed || !u.Capacity || len(u.Findings) != 0 {
		t.Fatalf("against TCP right after (%.1f): policed %v capacity %v findings %v", low.Mbit(), u.Policed, u.Capacity, u.Findings)
	}
}

func mustRead(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Which run carries WireGuard's port: from it where the client's own
// WireGuard does not hold it (--cport), to the far end's port where both
// ends listen on one (rewritten by nft on both ends), none unknown.
func TestWireGuardPortRun(t *testing.T) {
	for _, tc := range []struct {
		name           string
		ep             discover.Endpoints
		port           int
		toPort, reason bool
	}{
		{"the client listens on a port of its own", discover.Endpoints{ClientPort: 51900, ServerPort: 51820, EndpointPort: 51820}, 51820, false, false},
		{"both ends on 51820", discover.Endpoints{ClientPort: 51820, ServerPort: 51820, EndpointPort: 51820}, 51820, true, false},
		{"the peer's endpoint port, the far end's own unread", discover.Endpoints{ClientPort: 51820, EndpointPort: 51820}, 51820, true, false},
		{"no port known", discover.Endpoints{ClientPort: 51820}, 0, false, true},
	} {
		r := &Report{endpoints: tc.ep}
		port, toPort, why := r.wireGuardPortRun()
		if port != tc.port || toPort != tc.toPort || (why != "") != tc.reason {
			t.Errorf("%s: port %d, to it %v, why %q", tc.name, port, toPort, why)
		}
	}
}

// Recorded on a lab whose path throttles WireGuard's port (lab --port-police
// 25) with both ends listening on 51820, as the throttled port did:
// doctor could not send UDP with the port (WireGuard holds it on each end)
// and ranked 11% steal and a WireGuard-own collapse first. Sent to the far
// end's port through nft's rewrite, UDP lost 60% there and none on another
// port: the port's policer is the verdict, and it explains the gap.
func TestWireGuardPortThrottledBothEndsOnOnePort(t *testing.T) {
	var rec Report
	readJSON(t, &rec, "..", "internal", "doctor", "testdata", "wgport-throttled.recorded.json")
	var on *udppath.Result
	for _, u := range ProbeResult[[]*udppath.Result](&rec, udppath.Def) {
		if u.ToPort && u.Direction == bench.Upload {
			on = u
		}
	}
	if on == nil || on.Counted == 0 || !on.Policed || on.WireGuardPort != 51820 {
		t.Fatalf("the run to WireGuard's port: %+v", on)
	}
	r := &Report{Client: rec.Client, Server: rec.Server, Measured: rec.Measured}
	r.judge(rec.Findings)
	v := r.Verdict()
	if v == nil || v.Finding.ID != catalog.PathPortThrottled || v.GapShare == nil || *v.GapShare < ExplainsGap {
		t.Fatalf("verdict %+v, want path.port-throttled explaining the gap (%v)", v, ids(r.Causes))
	}
	if !strings.Contains(v.Finding.Evidence[0].Source, "to port 51820 (nft rewrite)") {
		t.Errorf("evidence %+v", v.Finding.Evidence)
	}
}
