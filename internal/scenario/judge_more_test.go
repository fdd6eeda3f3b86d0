package scenario

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
)

// A multi-WAN play that asks for the tunnel over each uplink fails unless
// doctor measured it both ways on every uplink; the others do not ask.
func TestTunnelOverEachUplink(t *testing.T) {
	both := []uplinks.Uplink{{Dev: "eth0", TunnelMbit: 183, TunnelDownMbit: 181}, {Dev: "eth1", Tunnel: true, TunnelMbit: 18, TunnelDownMbit: 18}}
	oneWay := []uplinks.Uplink{both[0], {Dev: "eth1", TunnelMbit: 18, TunnelError: "download: iperf3: timed out"}}
	for _, c := range []struct {
		name string
		sc   Scenario
		ups  []uplinks.Uplink
		want string
	}{
		{"measured both ways", Scenario{UplinkRoutes: true}, both, ""},
		{"one way only", Scenario{UplinkRoutes: true}, oneWay, "over eth1 (18.0 up, 0.0 down): download: iperf3: timed out"},
		{"no uplinks measured", Scenario{UplinkRoutes: true}, nil, "measured 0 uplinks"},
		{"not asked", Scenario{}, nil, ""},
	} {
		err := tunnelOverEachUplink(c.sc, c.ups)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	for _, name := range []string{"stale-endpoint-route", "slow-uplink"} {
		if sc, ok := Lookup(name); !ok || !sc.UplinkRoutes {
			t.Errorf("%s does not ask doctor for the tunnel over each uplink", name)
		}
	}
}

// A fix measured by parallel flows around the tunnel (a bond's hash) passes
// only when they were measured, the fix kept, and the gain reached.
func TestSpreadShort(t *testing.T) {
	m := func(v float64) fix.Measurement {
		return fix.Measurement{Name: "parallel flows around the tunnel", Value: v, Unit: "Mbit/s"}
	}
	for _, c := range []struct {
		name string
		v    *fix.Verification
		want string
	}{
		{"spread over both slaves", &fix.Verification{Before: m(94), After: m(183), Kept: true}, ""},
		{"not measured", nil, "not measured"},
		{"rolled back", &fix.Verification{Before: m(94), After: m(93), Kept: false}, "rolled back"},
		{"kept, too little", &fix.Verification{Before: m(94), After: m(120), Kept: true}, "(1.28x < 1.50x)"},
	} {
		got := strings.Join(spreadShort(c.v, 1.5), "; ")
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The kernel lane's script plays doctor's verdict alone, and the fix too for
// a scenario whose KernelFix says so (the bond's: the guest is make test's
// only kernel with the bonding driver), at the lane's rate or the
// scenario's KernelMbit.
func TestCatalogScriptPlaysKernelFixes(t *testing.T) {
	if sc, _ := Lookup("bond-hash"); !sc.KernelFix {
		t.Fatal("the kernel lane does not play bond-hash's fix")
	}
	for _, sc := range Catalog {
		if (sc.KernelFix || sc.KernelMbit > 0) && sc.KernelLane == "" {
			t.Errorf("%s sets how the kernel lane plays it, but is not in it", sc.Name)
		}
	}
	fake := filepath.Join(t.TempDir(), "wgperf")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", catalogScript([]string{"healthy", "bond-hash"}), "-", fake).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "lab run healthy --verdict-only --rate 10 ") ||
		!strings.HasPrefix(lines[1], "lab run bond-hash --rate 20 ") {
		t.Errorf("the loop ran:\n%s", out)
	}
}

// A scenario's bound grows by what each of its features adds to the plain
// one's twenty measurement lengths.
func TestBoundAddsEachFeaturesRuns(t *testing.T) {
	plain := 2*time.Minute + 20*2*time.Second
	tests := []struct {
		name string
		sc   Scenario
		want time.Duration
	}{
		{"plain", Scenario{}, plain},
		{"the long run", Scenario{Probes: []Probe{ProbeLongRun}}, plain + longRunBound},
		{"thorough", Scenario{Thorough: true}, plain + longRunBound},
		{"an idle proof", Scenario{IdleProof: 40}, plain + 40*time.Second},
		{"the other uplink", Scenario{UplinkRoutes: true}, plain + 36*time.Second},
		{"a bond", Scenario{Lab: lab.Config{BondSlaves: 2}}, plain + longRunBound + 6*time.Second},
	}
	for _, tt := range tests {
		if got := bound(tt.sc, 2); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
