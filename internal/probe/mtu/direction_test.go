package mtu

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/testutil"
)

func TestLocate(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    OneWay
		want string
	}{
		{"requests arrive, the far end's do not: the way back drops", OneWay{ForwardSent: 3, ForwardArrived: 3, ReturnSent: 3}, Return},
		{"ours vanish, the far end's arrive: the way out drops", OneWay{ForwardSent: 3, ReturnSent: 3, ReturnArrived: 3}, Forward},
		{"ours vanish, the far end knows its narrow hop", OneWay{ForwardSent: 3, ReturnRefused: true}, Forward},
		{"neither arrives", OneWay{ForwardSent: 3, ReturnSent: 3}, BothWays},
		{"both arrive: the round trip's loss was elsewhere", OneWay{ForwardSent: 3, ForwardArrived: 3, ReturnSent: 3, ReturnArrived: 3}, ""},
		{"a partial count tells nothing", OneWay{ForwardSent: 3, ForwardArrived: 1, ReturnSent: 3}, ""},
		{"a monitoring ping counted too still arrives", OneWay{ForwardSent: 3, ForwardArrived: 5, ReturnSent: 3}, Return},
		{"nothing sent", OneWay{}, ""},
	} {
		if got := locate(tt.o); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The counters as a lab node printed them after the one-way count.
func TestParseInEchos(t *testing.T) {
	for _, tt := range []struct {
		file string
		v6   bool
		want int64
	}{
		{"snmp.txt", false, 11},
		{"snmp6.txt", true, 0},
	} {
		b, err := os.ReadFile(testutil.Testdata("probe", "snmp", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ParseInEchos(b, tt.v6); err != nil || got != tt.want {
			t.Errorf("%s: %d, %v; want %d", tt.file, got, err, tt.want)
		}
	}
	if _, err := ParseInEchos([]byte("Udp: InDatagrams\nUdp: 4\n"), false); err == nil {
		t.Error("no Icmp line: want an error")
	}
}

// recordedResult is a path MTU search recorded in the lab.
func recordedResult(t *testing.T, name string) Result {
	t.Helper()
	b, err := os.ReadFile(testutil.Testdata("probe", "mtu", name))
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// wgMTUFix is the WireGuard MTU action among a finding's fixes.
func wgMTUFix(f finding.Finding) *finding.Action {
	for _, fx := range f.Fixes {
		if fx.Action != nil && fx.Action.Kind == remedy.KindWGMTU {
			return fx.Action
		}
	}
	return nil
}

// A return path that drops packets above 1400 bytes (the lab's silent hop
// towards A): the round trips from A lose the large probes, A's requests
// arrive at B and B's never reach A. The black hole lands on B, the sender
// of the broken direction, with B's interface; told nothing, on both ends.
func TestBlackHoleLandsOnSender(t *testing.T) {
	rec := recordedResult(t, "return-blackhole.json")
	if rec.OneWay == nil || rec.OneWay.Broken != Return {
		t.Fatalf("recorded one-way count %+v: want the return direction", rec.OneWay)
	}
	untold := rec
	untold.OneWay = nil
	forward := rec
	forward.OneWay = &OneWay{Size: rec.FirstFailed, ForwardSent: 3, ReturnSent: 3, ReturnArrived: 3, Broken: Forward}
	for _, tt := range []struct {
		name   string
		r      Result
		hosts  []string
		ifaces []string
		say    string
	}{
		{"return", rec, []string{rec.Server.String()}, []string{rec.ServerIface}, "Only the return direction"},
		{"forward", forward, []string{rec.Client.String()}, []string{rec.ClientIface}, "Only the forward direction"},
		{"not told", untold, []string{rec.Client.String(), rec.Server.String()}, []string{rec.ClientIface, rec.ServerIface}, "was not told"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := Findings(&tt.r)
			if len(fs) != len(tt.hosts) {
				t.Fatalf("%d findings, want %d: %+v", len(fs), len(tt.hosts), fs)
			}
			for i, f := range fs {
				a := wgMTUFix(f)
				if f.Host.String() != tt.hosts[i] || f.Interface != tt.ifaces[i] || a == nil || a.Params["interface"] != tt.ifaces[i] || a.Params["mtu"] != "1340" {
					t.Errorf("finding on %s %s with WireGuard MTU fix %+v; want %s %s, MTU 1340", f.Host, f.Interface, a, tt.hosts[i], tt.ifaces[i])
				}
				if !strings.Contains(f.Detail, tt.say) {
					t.Errorf("detail %q does not say %q", f.Detail, tt.say)
				}
			}
		})
	}
}

// The kernel module's regression: the PMTUD black hole case with the hosts'
// own TCP stalling at the hop (doctor's bench saw it), while the kernel
// tunnel (DF clear, fragmented there) passes its MSS steps. The search is
// the lab's underlay black hole as doctor recorded it (wireguard-go); the
// kernel's tunnel is its implementation and MSS steps that all ran, which
// is what the kernel guest reported. A proven black hole where TCP stalled
// is critical, the verdict; the same search without a stall stays a note.
func TestStalledBlackHoleIsNeverInfo(t *testing.T) {
	rec := recordedResult(t, "underlay-stalls.json")
	if !rec.BlackHole || !rec.TrafficStalled || rec.PathMTU != 1400 {
		t.Fatalf("recorded search: black hole %v, stalled %v, path MTU %d", rec.BlackHole, rec.TrafficStalled, rec.PathMTU)
	}
	rec.Implementation = "kernel"
	rec.MSSRuns = []MSSRun{{MSS: 1288, Mbit: 182.5, Healthy: true}, {MSS: 1380, Mbit: 180.1, Healthy: true}}
	rec.MSSGood, rec.MSSBad = 1380, 0
	stalled := rec
	stalled.OutsideRuns, stalled.OutsideGood, stalled.OutsideBad = nil, 0, 0 // the budget left none
	for name, r := range map[string]Result{"bench stalled": stalled, "outside steps collapsed": rec} {
		if fs := Findings(&r); len(fs) == 0 || fs[0].Severity != finding.Critical {
			t.Errorf("%s: findings %+v, want a critical black hole", name, fs)
		}
	}
	quiet := stalled
	quiet.TrafficStalled = false
	if fs := Findings(&quiet); len(fs) == 0 || fs[0].Severity != finding.Info {
		t.Errorf("no stall: findings %+v, want the note", fs)
	}
}
