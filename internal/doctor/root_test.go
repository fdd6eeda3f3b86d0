package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// labCase breaks a lab the way a catalog scenario does (internal/scenario
// catalog.go) and names the cause doctor must rank first.
type labCase struct {
	name    string
	lab     lab.Config
	sysctls map[string]string // initial-namespace values, restored after
	breaks  [][]string        // node, argv...; "{wg}" is the node's WireGuard interface
	first   string            // finding ID ranked first
	probe   string            // a targeted probe that must have run ("" for any)
}

var labCases = []labCase{
	{
		name: "PMTUD black hole: 1400-byte hop, ICMP frag-needed dropped",
		lab:  lab.Config{Name: "drpm", Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true},
		// The bulk transfer stalls; the MTU search proves the black hole.
		first: "mtu.pmtud-blackhole", probe: ProbeMTU,
	},
	{
		name:   "multi-WAN router: endpoint route stuck on the backup uplink",
		lab:    lab.Config{Name: "drst", Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 200}, Backup: lab.Shape{RateMbit: 20}},
		breaks: [][]string{{"a", "ip", "route", "add", "203.0.113.2", "via", "192.0.2.1", "dev", "eth1", "proto", "static", "metric", "20"}},
		first:  "route.stale-endpoint",
	},
	{
		name:  "WireGuard MTU 1500 over a 1500 underlay: fragmentation",
		lab:   lab.Config{Name: "drmf", Underlay: lab.Shape{RateMbit: 200}, WGMTU: 1500},
		first: "mtu.tunnel-too-large", probe: ProbeMTU,
	},
	{
		name:    "UDP receive buffer drops: small rmem_max, CUBIC senders, 20 ms RTT",
		lab:     lab.Config{Name: "drub", Underlay: lab.Shape{RateMbit: 100, DelayMs: 10}, UDPBuffer: lab.UDPBufferCapped},
		sysctls: map[string]string{"net.core.rmem_max": "32768", "net.ipv4.tcp_allowed_congestion_control": "reno cubic bbr"},
		breaks: [][]string{
			{"a", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"},
			{"b", "sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"},
		},
		first: "udp.rcvbuf-errors",
	},
	{
		name: "multi-WAN router: firewall ICMP limit eats the health checks' replies",
		lab:  lab.Config{Name: "dric", Underlay: lab.Shape{RateMbit: 100, DelayMs: 6}, ICMPLimit: 25},
		// Throughput is fine: only the icmp-burst probe, called for by the
		// limiter rule, can prove it.
		first: "icmp.ratelimit-drops", probe: ProbeICMPBurst,
	},
}

// TestDoctorLab: on each broken lab, doctor between the two sites ranks the
// case's cause first. Set WGPERF_DOCTOR_CASES to a comma-separated list of
// lab names (drpm, drst, drmf, drub, dric) to run some.
func TestDoctorLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ping")
	only := os.Getenv("WGPERF_DOCTOR_CASES")
	for _, tc := range labCases {
		if only != "" && !slices.Contains(strings.Split(only, ","), tc.lab.Name) {
			continue
		}
		t.Run(tc.lab.Name, func(t *testing.T) {
			// Before the lab: its WireGuard sockets take their buffer limit when they open.
			setSysctls(t, tc.sysctls)
			l := labtest.Up(t, tc.lab)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			for _, b := range tc.breaks {
				argv := slices.Clone(b[1:])
				for i := range argv {
					argv[i] = strings.ReplaceAll(argv[i], "{wg}", l.WGInterface(b[0]))
				}
				if out, err := l.Target(b[0]).Run(ctx, argv[0], argv[1:]...); err != nil {
					t.Fatalf("break %v: %v %s", b, err, out)
				}
			}
			cfg := Config{Client: l.Target("a"), Server: l.Target("b"), Seconds: 2, Progress: func(s string) { t.Log(s) }}
			rep, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Two-second runs and 40 pings on a shared 2-core machine are
			// noisy (a persistent ping lost to load hides the limiter's
			// difference): a case that missed is diagnosed once more.
			if v := rep.Verdict(); v == nil || v.Finding.ID != tc.first {
				t.Logf("first run: status %s, causes %v; once more", rep.Status, ids(rep.Causes))
				if rep, err = Run(ctx, cfg); err != nil {
					t.Fatal(err)
				}
			}
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (%s)\n%s", tc.name, tc.lab.Name, text.String())
			v := rep.Verdict()
			if v == nil {
				t.Fatalf("status %s, no verdict; want %s first", rep.Status, tc.first)
			}
			if v.Finding.ID != tc.first {
				t.Errorf("ranked first: %s, want %s (%v)", v.Finding.ID, tc.first, ids(rep.Causes))
			}
			if rep.Status == StatusHealthy {
				t.Errorf("status healthy on a broken lab")
			}
			if tc.probe != "" && !slices.ContainsFunc(rep.Probes, func(p ProbeRun) bool { return p.Probe == tc.probe && p.Error == "" }) {
				t.Errorf("probe %s did not run (%+v)", tc.probe, rep.Probes)
			}
			if v.Command == "" || !strings.Contains(v.Command, "--only "+tc.first) {
				t.Errorf("verdict command %q", v.Command)
			}
			t.Logf("TABLE | %s | %s | ranked first: %v | %.0f s", tc.name, tc.first, v.Finding.ID == tc.first, rep.Seconds)
		})
	}
}

// setSysctls sets initial-namespace sysctls and restores the exact previous
// values when the test ends (child namespaces mirror or cannot set them).
func setSysctls(t *testing.T, want map[string]string) {
	t.Helper()
	for k, v := range want {
		path := filepath.Join("/proc/sys", strings.ReplaceAll(k, ".", "/"))
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Errorf("restore %s: %v", k, err)
			}
		})
		if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Without a server, doctor on the black-hole lab says throughput could not be
// judged, and its one-ended DF search to the peer's endpoint still proves the
// black hole.
func TestDoctorOneEndLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ping")
	if only := os.Getenv("WGPERF_DOCTOR_CASES"); only != "" && !slices.Contains(strings.Split(only, ","), "drone") {
		t.Skip("not in WGPERF_DOCTOR_CASES")
	}
	l := labtest.Up(t, lab.Config{Name: "drone", Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Client: l.Target("a")})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if rep.Status != StatusUnjudged || rep.Measured.Benched || len(rep.NotJudged) == 0 {
		t.Errorf("status %s, benched %v, not judged %q", rep.Status, rep.Measured.Benched, rep.NotJudged)
	}
	if len(rep.Probes) != 1 || rep.Probes[0].Probe != ProbeMTU || rep.MTU == nil || rep.MTU.Addr != l.Node("b").UnderlayAddr {
		t.Fatalf("probes %+v", rep.Probes)
	}
	if v := rep.Verdict(); v == nil || v.Finding.ID != "mtu.pmtud-blackhole" {
		t.Errorf("verdict %+v, want mtu.pmtud-blackhole", v)
	}
}

// --fix on the PMTUD black hole lowers the WireGuard MTU on both ends (each
// step verified and confirmed) and the tunnel carries bulk TCP both ways again.
func TestDoctorFixBlackHoleLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ping")
	if only := os.Getenv("WGPERF_DOCTOR_CASES"); only != "" && !slices.Contains(strings.Split(only, ","), "drfb") {
		t.Skip("not in WGPERF_DOCTOR_CASES")
	}
	name := "drfb"
	l := labtest.Up(t, lab.Config{Name: name, Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true})
	// Persistent config and journals go under the lab's folder, never the host's /etc.
	root := filepath.Join(lab.StateDir, name, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Seconds: 2, Fix: true, FixRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	f := rep.Fix
	if f == nil || !f.Applied || !f.Kept || !f.Confirm || f.After == nil || len(f.Steps) != 2 {
		t.Fatalf("fix %+v", f)
	}
	for _, d := range []DirRate{f.After.Up, f.After.Down} {
		if d.Ratio() < 0.8 {
			t.Errorf("after the fix: tunnel %.1f of underlay %.1f Mbit/s", d.Tunnel, d.Underlay)
		}
	}
	for _, node := range []string{"a", "b"} {
		out, err := l.Target(node).ReadFile(ctx, "/sys/class/net/"+l.WGInterface(node)+"/mtu")
		if err != nil || strings.TrimSpace(string(out)) != "1340" {
			t.Errorf("%s: WireGuard MTU %q (%v), want 1340", node, out, err)
		}
	}
}
