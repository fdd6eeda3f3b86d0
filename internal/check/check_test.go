package check

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// coverage records, per check ID, whether a table case saw it fire and one saw
// it stay quiet; TestMain fails the run when a registered check lacks either.
var coverage = map[string]*struct{ fired, quiet bool }{}

func TestMain(m *testing.M) {
	code := m.Run()
	// Only a full run can judge coverage; "-run X" runs a subset on purpose.
	if f := flag.Lookup("test.run"); code == 0 && (f == nil || f.Value.String() == "") {
		var gaps []string
		for _, id := range allIDs() {
			c := coverage[id]
			switch {
			case c == nil:
				gaps = append(gaps, id+": no table test")
			case !c.fired:
				gaps = append(gaps, id+": no case where it fires")
			case !c.quiet:
				gaps = append(gaps, id+": no case where it stays quiet")
			}
		}
		if len(gaps) > 0 {
			fmt.Fprintln(os.Stderr, "check coverage:\n  "+strings.Join(gaps, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// allIDs names per-host checks by ID and cross-host checks as "cross:ID".
func allIDs() []string {
	var ids []string
	for _, c := range Checks {
		ids = append(ids, string(c.ID))
	}
	for _, c := range CrossChecks {
		ids = append(ids, "cross:"+string(c.ID))
	}
	return ids
}

// checkCase is one row of a check's table test.
type checkCase struct {
	name   string
	snap   *facts.Snapshot
	opts   Options
	want   []finding.Severity // severities of the findings expected, in order
	skip   bool               // expect a SkipError
	assert func(t *testing.T, fs []finding.Finding)
}

// runCases runs a check's table and records coverage.
func runCases(t *testing.T, check *Check, cases []checkCase) {
	t.Helper()
	c := *check
	c.ID = entryID(t, func(e Entry) bool { return e.Check == check })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := c.Run(tc.snap, tc.opts)
			if tc.skip {
				var skip *SkipError
				if err == nil || !asSkip(err, &skip) || skip.Reason == "" {
					t.Fatalf("want a skip with a reason, got findings %v, err %v", ids(fs), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var got []finding.Severity
			for _, f := range fs {
				got = append(got, f.Severity)
				validFinding(t, c.ID, tc.snap, f)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("severities = %v, want %v\n%s", got, tc.want, dump(fs))
			}
			if tc.assert != nil {
				tc.assert(t, fs)
			}
			record(string(c.ID), len(fs) > 0)
		})
	}
}

func record(id string, fired bool) {
	c := coverage[id]
	if c == nil {
		c = &struct{ fired, quiet bool }{}
		coverage[id] = c
	}
	if fired {
		c.fired = true
	} else {
		c.quiet = true
	}
}

func asSkip(err error, skip **SkipError) bool {
	s, ok := err.(*SkipError)
	*skip = s
	return ok
}

// validFinding holds every finding to the report contract: ID, host, title,
// evidence with source/key/value, and at least one fix with commands.
func validFinding(t *testing.T, id finding.ID, s *facts.Snapshot, f finding.Finding) {
	t.Helper()
	if f.ID != id {
		t.Errorf("finding ID %q, want %q", f.ID, id)
	}
	inCatalog(t, f)
	if s != nil && f.Host.String() != hostName(s) {
		t.Errorf("finding host %q, want %q", f.Host, hostName(s))
	}
	if f.Title == "" || f.Detail == "" {
		t.Errorf("%s: empty title or detail", id)
	}
	if len(f.Evidence) == 0 {
		t.Errorf("%s: no evidence", id)
	}
	for _, e := range f.Evidence {
		if e.Source == "" || e.Key == "" || e.Value == "" {
			t.Errorf("%s: incomplete evidence %+v", id, e)
		}
	}
	if len(f.Fixes) == 0 {
		t.Errorf("%s: no fix", id)
	}
	for _, x := range f.Fixes {
		if x.Description == "" || len(x.Commands) == 0 {
			t.Errorf("%s: fix without description or commands: %+v", id, x)
		}
		if x.Action != nil && len(x.Action.Params) == 0 {
			t.Errorf("%s: action %q without params", id, x.Action.Kind)
		}
	}
}

func ids(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.ID)+"/"+f.Severity.String())
	}
	return out
}

func dump(fs []finding.Finding) string {
	b, _ := json.MarshalIndent(fs, "", "  ")
	return string(b)
}

// loadSnapshot reads a snapshot from testdata/snapshots (recorded from the lab
// with wgperf collect, or transcribed from a real case when the lab cannot produce it).
func loadSnapshot(t testing.TB, name string) *facts.Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "snapshots", name))
	if err != nil {
		t.Fatal(err)
	}
	var s facts.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &s
}

// clone deep-copies a snapshot so a case can change it freely.
func clone(t testing.TB, s *facts.Snapshot) *facts.Snapshot {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var c facts.Snapshot
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// with returns a changed copy of s.
func with(t testing.TB, s *facts.Snapshot, change func(s *facts.Snapshot)) *facts.Snapshot {
	t.Helper()
	c := clone(t, s)
	change(c)
	return c
}

var testNow = time.Date(2026, 4, 7, 19, 56, 0, 0, time.UTC)

// healthyHost is a hand-built site-to-site end: one kernel WireGuard interface
// over eth0, a live peer, default tuning, nothing dropped.
func healthyHost() *facts.Snapshot {
	return &facts.Snapshot{
		SchemaVersion: facts.SchemaVersion,
		Host:          targettest.Spec("ssh:site-a"),
		CollectedAt:   testNow,
		System:        facts.System{Hostname: "site-a", Kernel: "6.1.0-18-amd64", Distro: "Debian GNU/Linux 12 (bookworm)", CPUs: 4},
		WireGuard: []facts.WGInterface{{
			Name: "wg0", PublicKey: "AAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAA=", ListenPort: 51820, MTU: 1420, Implementation: "kernel",
			Peers: []facts.WGPeer{{
				PublicKey: "BBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBB=", Endpoint: "203.0.113.2:51820",
				AllowedIPs: []string{"10.77.0.2/32", "192.168.50.0/24"}, LatestHandshake: testNow.Add(-40 * time.Second),
				RxBytes: 1 << 20, TxBytes: 2 << 20, PersistentKeepalive: 25,
			}},
		}},
		Links: []facts.Link{
			{Name: "lo", Index: 1, MTU: 65536, State: "UNKNOWN"},
			{Name: "eth0", Index: 2, MTU: 1500, State: "UP", Qdisc: "fq_codel", RPSCPUs: map[string]string{"rx-0": "0"}},
			{Name: "eth1", Index: 3, MTU: 1500, State: "UP", Qdisc: "fq_codel"},
			{Name: "wg0", Index: 4, MTU: 1420, Kind: "wireguard", State: "UNKNOWN"},
		},
		Routes: []facts.Route{
			{Family: "inet", Table: "main", Dst: "default", Gateway: "198.51.100.1", Dev: "eth0", Protocol: "static", Metric: 0},
			{Family: "inet", Table: "main", Dst: "198.51.100.0/24", Dev: "eth0", Protocol: "kernel", Scope: "link", PrefSrc: "198.51.100.2"},
			{Family: "inet", Table: "main", Dst: "192.168.1.0/24", Dev: "eth1", Protocol: "kernel", Scope: "link", PrefSrc: "192.168.1.1"},
			{Family: "inet", Table: "main", Dst: "10.77.0.0/24", Dev: "wg0", Protocol: "kernel", Scope: "link", PrefSrc: "10.77.0.1"},
			{Family: "inet", Table: "main", Dst: "192.168.50.0/24", Dev: "wg0", Protocol: "static"},
		},
		Endpoints: []facts.EndpointRoute{{Interface: "wg0", Peer: "BBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBB=", Endpoint: "203.0.113.2", Dev: "eth0", Gateway: "198.51.100.1", Src: "198.51.100.2"}},
		Sysctls: map[string]string{
			"net.ipv4.ip_forward":                       "1",
			"net.ipv4.tcp_congestion_control":           "bbr",
			"net.ipv4.tcp_available_congestion_control": "reno cubic bbr",
			"net.ipv4.tcp_rmem":                         "4096\t131072\t6291456",
			"net.ipv4.tcp_wmem":                         "4096\t16384\t4194304",
			"net.core.rmem_max":                         "212992",
			"net.core.rmem_default":                     "212992",
			"net.core.wmem_max":                         "212992",
			"net.core.wmem_default":                     "212992",
			"net.core.netdev_max_backlog":               "1000",
		},
		Counters: facts.Counters{
			SNMP: map[string]map[string]int64{
				"Udp": {"InDatagrams": 120000, "RcvbufErrors": 0, "SndbufErrors": 0},
				"Tcp": {"OutSegs": 500000, "RetransSegs": 120},
			},
		},
		Softnet: []facts.SoftnetCPU{
			{CPU: 0, Processed: 400000}, {CPU: 1, Processed: 380000}, {CPU: 2, Processed: 350000}, {CPU: 3, Processed: 410000},
		},
		Firewall: facts.Firewall{
			Nftables: true,
			Rules: []facts.FirewallRule{{
				Backend: "nft", Family: "inet", Table: "filter", Chain: "forward", Hook: "forward", Handle: 5,
				Text: `oifname "wg0" tcp flags syn / syn,rst tcp option maxseg size set rt mtu`, OIf: "wg0", Protocol: "tcp", MSSClamp: "pmtu",
			}},
		},
	}
}

func sev(s ...finding.Severity) []finding.Severity { return s }

const (
	info     = finding.Info
	warning  = finding.Warning
	critical = finding.Critical
)

func TestRunSkipsAndSorts(t *testing.T) {
	s := withUserspace(t, healthyHost())
	s.Softnet = nil
	s.Notes = []facts.Note{{Source: "/proc/net/softnet_stat", Message: "permission denied"}}
	s.Counters.SNMP["Udp"]["RcvbufErrors"] = 7
	s.WireGuard[0].MTU = 1480
	r := Run([]*facts.Snapshot{s}, Options{})
	if got := ids(r.Findings); fmt.Sprint(got) != "[mtu.tunnel-too-large/critical udp.rcvbuf-errors/warning wg.userspace/info]" {
		t.Errorf("findings = %v", got)
	}
	var skipped []string
	for _, sk := range r.Skipped {
		skipped = append(skipped, string(sk.Check))
		if sk.Host.String() != "ssh:site-a" || !strings.Contains(sk.Reason, "permission denied") {
			t.Errorf("skip %+v should name the host and the note's reason", sk)
		}
	}
	if fmt.Sprint(skipped) != "[cpu.softirq-imbalance net.backlog-drops net.softirq-budget]" {
		t.Errorf("skipped = %v", skipped)
	}
}

func TestHealthyHostIsQuiet(t *testing.T) {
	r := Run([]*facts.Snapshot{healthyHost()}, Options{})
	if len(r.Findings) != 0 || len(r.Skipped) != 0 {
		t.Errorf("healthy host: findings %v, skipped %+v", ids(r.Findings), r.Skipped)
	}
}

// Every check reports under its own ID, so the registry is the catalog.
func TestChecksEmitTheirOwnID(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "snapshots", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no snapshots: %v", err)
	}
	var snaps []*facts.Snapshot
	for _, p := range paths {
		snaps = append(snaps, loadSnapshot(t, filepath.Base(p)))
	}
	snaps = append(snaps, healthyHost())
	seen := 0
	for _, s := range snaps {
		for _, c := range Checks {
			fs, _ := c.Run(s, Options{})
			for _, f := range fs {
				seen++
				if f.ID != c.ID {
					t.Errorf("check %s reported %s", c.ID, f.ID)
				}
			}
		}
	}
	for _, c := range CrossChecks {
		for _, f := range c.Run(snaps, Options{}) {
			seen++
			if f.ID != c.ID {
				t.Errorf("cross check %s reported %s", c.ID, f.ID)
			}
		}
	}
	if seen == 0 {
		t.Error("no check found anything on the recorded snapshots")
	}
}
