package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func readSnap(t *testing.T, name string) *facts.Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "snapshots", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := document.ReadSnapshot(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// checked runs every check, cross-host included, over recorded snapshots.
func checked(t *testing.T, names ...string) ([]finding.Finding, []*facts.Snapshot) {
	t.Helper()
	var snaps []*facts.Snapshot
	for _, n := range names {
		snaps = append(snaps, readSnap(t, n))
	}
	return check.Run(snaps, check.Options{}).Findings, snaps
}

func measured(client, server string, up, upU, down, downU float64) Measured {
	return Measured{Benched: true, Client: targettest.Spec(client), Server: targettest.Spec(server), Expected: bench.SingleHopRatio,
		Throughput: bench.Throughput{Up: bench.DirRate{Tunnel: up, Underlay: upU}, Down: bench.DirRate{Tunnel: down, Underlay: downU}}}
}

// lossy is m with UDP outside the tunnel having lost loss of its datagrams.
func lossy(m Measured, loss float64) Measured {
	m.PathLoss = loss
	return m
}

func ids(cs []Cause) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Finding.ID)+"@"+c.Finding.Host.String())
	}
	return out
}

// TestRank ranks recorded evidence: the cause that explains the most
// throughput comes first, notes and latent risks last.
func TestRank(t *testing.T) {
	const (
		a5, b5 = "netns:wgl-wgd5-a", "netns:wgl-wgd5-b"
		a4, b4 = "netns:wgl-wgd4-a", "netns:wgl-wgd4-b"
	)
	blackhole := finding.Finding{ID: "mtu.pmtud-blackhole", Severity: finding.Critical, Host: targettest.Spec(a4), Title: "black hole"}
	conntrack := finding.Finding{ID: "conntrack.table-pressure", Severity: finding.Warning, Host: targettest.Spec(b4), Title: "conntrack"}
	cubic := finding.Finding{ID: "tcp.congestion-control", Severity: finding.Warning, Host: targettest.Spec(a5), Title: "CUBIC"}
	cubicWGD0 := finding.Finding{ID: "tcp.congestion-control", Severity: finding.Warning, Host: targettest.Spec("netns:wgl-wgd0-a"), Title: "CUBIC"}
	cubicPinned := cubicWGD0
	cubicPinned.Evidence = []finding.Evidence{{Source: "iperf3", Key: bench.LossPinnedKey, Value: "1.3%", Threshold: "< 1%"}}
	bloat := finding.Finding{ID: "latency.bufferbloat", Severity: finding.Warning, Host: targettest.Spec("netns:wgl-wgd0-a"), Title: "an upload adds 190 ms; the queue is on the path"}
	for _, tc := range []struct {
		name      string
		snaps     []string
		extra     []finding.Finding // what probes and the bench proved
		m         Measured
		first     string // ID@host ranked first
		direction string
		status    string
		after     []string // IDs that must rank below first (in this order among themselves)
	}{
		{
			name:  "multi-WAN router: endpoint route stuck on the backup uplink outranks the ICMP limit (golem, one end)",
			snaps: []string{"seed000-golem"}, m: Measured{Client: targettest.Spec("ssh:root@golem"), Expected: 0.9},
			first: "route.stale-endpoint@ssh:root@golem", status: StatusUnjudged, after: []string{"icmp.ratelimit-drops"},
		},
		{
			name:  "stale route over a 10x slower uplink: the bench ratio looks fine, the route still comes first",
			snaps: []string{"lab-multiwan-stale-a"}, m: measured("netns:wgl-wgd3-a", "netns:wgl-wgd3-b", 18.5, 18.8, 18.2, 19.1),
			first: "route.stale-endpoint@netns:wgl-wgd3-a", status: StatusSlow, after: []string{"conntrack.tunnel-tracked", "wg.userspace"},
		},
		{
			name:  "UDP receive buffer drops on the receiver explain the slow upload; CUBIC reacting to them comes after",
			snaps: []string{"lab-loss3-udpbuf64k-a", "lab-loss3-udpbuf64k-b"}, extra: []finding.Finding{cubic},
			m:     measured(a5, b5, 61, 190, 171, 190),
			first: "udp.rcvbuf-errors@" + b5, direction: "upload", status: StatusSlow, after: []string{"tcp.congestion-control"},
		},
		{
			name:  "WireGuard MTU above the path on both ends, transfer stalled: before the MSS clamp and the ICMP limit",
			snaps: []string{"lab-mtu1480-icmplimit-lan-a", "lab-mtu1480-icmplimit-lan-b"},
			m:     Measured{Benched: true, Client: targettest.Spec(a4), Server: targettest.Spec(b4), Expected: 0.9, Stalled: true},
			first: "mtu.tunnel-too-large@" + a4, status: StatusSlow, after: []string{"mtu.mss-clamp-missing", "icmp.ratelimit-drops"},
		},
		{
			name:  "a proven black hole outranks a conntrack warning and the MTU it implies",
			snaps: []string{"lab-mtu1480-icmplimit-lan-a", "lab-mtu1480-icmplimit-lan-b"}, extra: []finding.Finding{conntrack, blackhole},
			m:     Measured{Benched: true, Client: targettest.Spec(a4), Server: targettest.Spec(b4), Expected: 0.9, Stalled: true},
			first: "mtu.pmtud-blackhole@" + a4, status: StatusSlow, after: []string{"mtu.tunnel-too-large", "conntrack.table-pressure"},
		},
		{
			name:  "gateways dropping the frag-needed their LAN hosts need: the cure before the MSS clamp that works around it",
			snaps: []string{"lab-lan-fragblocked-a", "lab-lan-fragblocked-b"},
			m:     measured("netns:wgl-rc4-a", "netns:wgl-rc4-b", 183, 191, 180, 191),
			first: "icmp.frag-needed-dropped@netns:wgl-rc4-a", status: StatusProblems, after: []string{"mtu.mss-clamp-missing"},
		},
		{
			name:  "a black hole the probe proved, behind a rule that drops frag-needed: the cure before the MTU workaround",
			snaps: []string{"lab-lan-fragblocked-a"},
			extra: []finding.Finding{{ID: "mtu.pmtud-blackhole", Severity: finding.Critical, Host: targettest.Spec("netns:wgl-rc4-a"), Title: "black hole"}},
			m:     Measured{Benched: true, Client: targettest.Spec("netns:wgl-rc4-a"), Server: targettest.Spec("netns:wgl-rc4-b"), Expected: 0.9, Stalled: true},
			first: "icmp.frag-needed-dropped@netns:wgl-rc4-a", status: StatusSlow, after: []string{"mtu.pmtud-blackhole", "mtu.mss-clamp-missing"},
		},
		{
			name:  "CUBIC losing its rate on a lossy WAN while it fills the queue: the rate's cause first, the queue after",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, extra: []finding.Finding{bloat, cubicWGD0},
			m:     measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 3.0, 9.5, 15.6, 19.0),
			first: "tcp.congestion-control@netns:wgl-wgd0-a", status: StatusSlow, after: []string{"latency.bufferbloat"},
		},
		{
			name:  "CUBIC a little short through the queue it fills (kernel WireGuard, 0.84): within the shaper's 10%, the queue first",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, extra: []finding.Finding{bloat, cubicWGD0},
			m:     measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 17.6, 19.2, 17.3, 20.5),
			first: "latency.bufferbloat@netns:wgl-wgd0-a", status: StatusSlow, after: []string{"tcp.congestion-control"},
		},
		{
			name:  "kernel WireGuard fragmenting on a 1400-byte hop (0.82) beside a queue on the path: the MTU that costs the rate first, the queue after",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, extra: []finding.Finding{bloat,
				{ID: "mtu.tunnel-too-large", Severity: finding.Warning, Host: targettest.Spec("netns:wgl-wgd0-b"), Title: "wg-kern-b MTU 1420 is larger than eth0 allows (1340)"}},
			m:     measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 16.0, 19.1, 15.6, 19.1),
			first: "mtu.tunnel-too-large@netns:wgl-wgd0-b", status: StatusSlow, after: []string{"latency.bufferbloat"},
		},
		{
			name:  "CUBIC pinned by a lossy WAN's loss, the underlay crawling on it too (kernel WireGuard, 0.87): the ratio hides its cost, CUBIC before the queue",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, extra: []finding.Finding{bloat, cubicPinned},
			m:     measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 1.9, 2.2, 2.0, 2.1),
			first: "tcp.congestion-control@netns:wgl-wgd0-a", status: StatusSlow, after: []string{"latency.bufferbloat"},
		},
		{
			name:  "CUBIC's window swinging where UDP outside the tunnel lost 3% (kernel WireGuard, 0.87): the loss's algorithm before the queue",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, extra: []finding.Finding{bloat, cubicWGD0},
			m:     lossy(measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 1.9, 2.2, 2.0, 2.1), 0.03),
			first: "tcp.congestion-control@netns:wgl-wgd0-a", status: StatusSlow, after: []string{"latency.bufferbloat"},
		},
		{
			name:  "the rate is fine and a transfer fills the uplink's queue: the queue is the answer",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, extra: []finding.Finding{bloat},
			m:     measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 17.5, 18.6, 17.9, 18.7),
			first: "latency.bufferbloat@netns:wgl-wgd0-a", status: StatusProblems, after: []string{"wg.userspace"},
		},
		{
			name:  "health-check pings eaten by an ICMP limit beside a queue the transfer fills, the rate fine: the limit before the queue",
			snaps: []string{"lab-mtu1480-icmplimit-lan-a", "lab-mtu1480-icmplimit-lan-b"}, extra: []finding.Finding{{ID: "latency.bufferbloat", Severity: finding.Warning, Host: targettest.Spec(a4), Title: "the queue is on the path"}},
			m:     measured(a4, b4, 91.3, 94.7, 91.6, 95.6),
			first: "mtu.mss-clamp-missing@" + a4, status: StatusProblems, after: []string{"icmp.ratelimit-drops", "latency.bufferbloat"},
		},
		{
			name:  "healthy lab: only notes, healthy",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"}, m: measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 180, 190, 181, 190),
			status: StatusHealthy,
		},
		{
			name:  "a healthy bench with a CPU near its limit: healthy, the CPU a latent risk ranked low",
			snaps: []string{"lab-healthy-a", "lab-healthy-b"},
			extra: []finding.Finding{{ID: "cpu.saturated", Severity: finding.Warning, Host: targettest.Spec("netns:wgl-wgd0-a"), Title: "CPU 1 97%"}},
			m:     measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 180, 190, 181, 190),
			first: "cpu.saturated@netns:wgl-wgd0-a", status: StatusHealthy, after: []string{"wg.userspace"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _ := checked(t, tc.snaps...)
			fs = finding.Merge(append(fs, tc.extra...))
			causes := Rank(fs, tc.m)
			got := ids(causes)
			if tc.first != "" && (len(got) == 0 || got[0] != tc.first) {
				t.Fatalf("ranked %v, want %s first", got, tc.first)
			}
			if tc.direction != "" && causes[0].Direction != tc.direction {
				t.Errorf("direction %s, want %s", causes[0].Direction, tc.direction)
			}
			last := 0
			for _, id := range tc.after {
				i := slices.IndexFunc(causes, func(c Cause) bool { return string(c.Finding.ID) == id })
				if i < 0 {
					t.Errorf("%s not ranked (%v)", id, got)
					continue
				}
				if i <= last {
					t.Errorf("%s ranked %d, want after position %d (%v)", id, i, last, got)
				}
				last = i
			}
			for i := 1; i < len(causes); i++ {
				// Within what can explain the gap, and within what cannot.
				if causes[i].Score > causes[i-1].Score && (causes[i].CannotExplain == "") == (causes[i-1].CannotExplain == "") {
					t.Errorf("not sorted by score: %v", got)
				}
			}
			for _, c := range causes {
				if Symptom(c.Finding.ID) {
					t.Errorf("symptom %s ranked as a cause", c.Finding.ID)
				}
			}
			if s := status(fs, tc.m); s != tc.status {
				t.Errorf("status %s, want %s", s, tc.status)
			}
		})
	}
}

// The expected gain names figures where the bench measured a deficit.
func TestGain(t *testing.T) {
	m := measured("a", "b", 61, 190, 171, 190)
	cs := Rank([]finding.Finding{{ID: "udp.rcvbuf-errors", Severity: finding.Warning, Host: targettest.Spec("b")}}, m)
	if g := cs[0].Gain; !strings.Contains(g, "upload 61 → ≥ 171 Mbit/s") || strings.Contains(g, "download") {
		t.Errorf("gain %q", g)
	}
	cs = Rank([]finding.Finding{{ID: "udp.rcvbuf-errors", Severity: finding.Warning, Host: targettest.Spec("b")}}, Measured{Expected: 0.9})
	if g := cs[0].Gain; !strings.Contains(g, "--server") {
		t.Errorf("unbenched gain %q", g)
	}
}

// TestPlanProbes: targeted probes only on evidence.
func TestPlanProbes(t *testing.T) {
	probes := func(ps []ProbePlan) string {
		var out []string
		for _, p := range ps {
			out = append(out, string(p.Probe)+strings.Join(append(append([]string{""}, p.Targets...), p.Directions...), " "))
		}
		return strings.Join(out, "; ")
	}
	healthyFs, healthySnaps := checked(t, "lab-healthy-a", "lab-healthy-b")
	ok := measured("netns:wgl-wgd0-a", "netns:wgl-wgd0-b", 180, 190, 181, 190)
	mtuFs, mtuSnaps := checked(t, "lab-mtu1480-icmplimit-lan-a", "lab-mtu1480-icmplimit-lan-b")
	golemFs, golemSnaps := checked(t, "seed000-golem")
	osc := []finding.Finding{{ID: "throughput.oscillation", Severity: finding.Warning}}
	for _, tc := range []struct {
		name    string
		healthy bool
		fs      []finding.Finding
		m       Measured
		client  *facts.Snapshot
		want    string
	}{
		{"healthy: nothing", true, healthyFs, ok, healthySnaps[0], ""},
		{"slow without MTU evidence or health checks: UDP outside the tunnel in the slow direction", false, healthyFs, measured("a", "b", 60, 190, 180, 190), healthySnaps[0], "udp-outside upload"},
		{"stall: MTU search", false, healthyFs, Measured{Benched: true, Stalled: true}, healthySnaps[0], "mtu"},
		{"MTU findings and an ICMP limit rule: MTU search, icmp-burst to the gateway and endpoint", false, mtuFs, measured("a", "b", 60, 190, 180, 190), mtuSnaps[0],
			"mtu; icmp-burst 198.51.100.1 203.0.113.2"},
		{"one end: DF search, icmp-burst to mwan3's track_ip", false, golemFs, Measured{}, golemSnaps[0], "mtu; icmp-burst 1.1.1.1 208.67.222.222 8.8.8.8"},
		{"healthy with an ICMP limit rule: icmp-burst only", true, mtuFs, ok, mtuSnaps[0], "icmp-burst 198.51.100.1 203.0.113.2"},
		{"oscillation: UDP outside the tunnel, the shaping sweep", false, osc, measured("a", "b", 100, 190, 180, 190), healthySnaps[0], "udp-outside upload; shape-sweep"},
		{"slow, explained by UDP receive-buffer drops on the receiver: no UDP run", false,
			[]finding.Finding{{ID: "udp.rcvbuf-errors", Severity: finding.Warning, Host: targettest.Spec("b")}}, measured("a", "b", 60, 190, 180, 190), healthySnaps[0], ""},
		{"full conntrack table: no probe (its pings would be dropped as new flows)", false,
			append(slices.Clone(mtuFs), finding.Finding{ID: "conntrack.table-pressure", Severity: finding.Critical}), Measured{}, mtuSnaps[0], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := probes(PlanProbes(tc.healthy, tc.fs, tc.m, nil, tc.client)); got != tc.want {
				t.Errorf("probes %q, want %q", got, tc.want)
			}
		})
	}
}

// A collapse through the tunnel but not around it calls for the MTU search.
func TestMTUReasonCollapse(t *testing.T) {
	rep := &bench.Report{Runs: []bench.Run{
		{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: 1}, Stats: bench.Stats{Collapses: 2}},
		{Spec: bench.Spec{Path: bench.PathUnderlay, Direction: bench.Upload, Streams: 1}},
	}}
	rep.Runs[1].Result = &iperfResult
	if why := mtuReason(nil, measured("a", "b", 100, 190, 180, 190), rep); !strings.Contains(why, "collapse") {
		t.Errorf("reason %q", why)
	}
	rep.Runs[1].Stats.Collapses = 1
	if why := mtuReason(nil, measured("a", "b", 100, 190, 180, 190), rep); why != "" {
		t.Errorf("collapsing underlay too: reason %q, want none", why)
	}
}

var iperfResult = iperf.Result{}

// A full conntrack table refuses the bench's own connections: it outranks
// what a probe made of the lost packets, whether or not the bench ran.
func TestRankFullConntrackTable(t *testing.T) {
	full := finding.Finding{ID: "conntrack.table-pressure", Severity: finding.Critical, Host: targettest.Spec("b")}
	near := finding.Finding{ID: "conntrack.table-pressure", Severity: finding.Warning, Host: targettest.Spec("b")}
	hole := finding.Finding{ID: "mtu.pmtud-blackhole", Severity: finding.Critical, Host: targettest.Spec("a")}
	rcv := finding.Finding{ID: "udp.rcvbuf-errors", Severity: finding.Critical, Host: targettest.Spec("b")}
	for _, tc := range []struct {
		name string
		fs   []finding.Finding
		m    Measured
		want string
	}{
		{"bench could not run", []finding.Finding{hole, full}, Measured{}, "conntrack.table-pressure@b"},
		{"bench stalled", []finding.Finding{full, rcv}, Measured{Benched: true, Stalled: true, Expected: 0.9}, "conntrack.table-pressure@b"},
		{"near full is a warning that waits", []finding.Finding{near, rcv}, measured("a", "b", 20, 100, 90, 100), "udp.rcvbuf-errors@b"},
	} {
		if got := ids(Rank(tc.fs, tc.m)); len(got) == 0 || got[0] != tc.want {
			t.Errorf("%s: ranked %v, want %s first", tc.name, got, tc.want)
		}
	}
}

// A missing MSS clamp stalls the hosts behind the gateways while the gateways'
// own bench is healthy: doctor reports problems with it as the verdict.
func TestMSSClampMissingBehindHealthyGateways(t *testing.T) {
	fs := []finding.Finding{
		{ID: "mtu.mss-clamp-missing", Severity: finding.Warning, Host: targettest.Spec("a")},
		{ID: "conntrack.tunnel-tracked", Severity: finding.Info, Host: targettest.Spec("a")},
	}
	m := measured("a", "b", 183, 191, 183, 191)
	r := &Report{}
	r.Measured = m
	r.judge(fs)
	if r.Status != StatusProblems {
		t.Errorf("status %s, want %s", r.Status, StatusProblems)
	}
	if v := r.Verdict(); v == nil || v.Finding.ID != "mtu.mss-clamp-missing" || !strings.Contains(v.Gain, "hosts behind the gateways") {
		t.Errorf("verdict %+v, want mtu.mss-clamp-missing with its gain", v)
	}
}
