package lab_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestFleetUpDown starts a fleet of 6 routers, one unreachable: each other
// router answers over ssh with its own WireGuard interface and peers in a
// BusyBox userland, the inventory lists all 6, and lab down leaves no
// namespace of the fleet behind.
func TestFleetUpDown(t *testing.T) {
	ctx := context.Background()
	f := labtest.Fleet(t, lab.FleetConfig{Name: "fltu", Count: 6, Peers: 2, DeadPct: 20})
	if f.Count != 6 || len(f.Specs) != 6 || len(f.Dead) != 1 {
		t.Fatalf("fleet: %d routers (%d specs), dead %v; want 6, one dead", f.Count, len(f.Specs), f.Dead)
	}
	keys := map[string]bool{}
	for i, spec := range f.Specs {
		if i+1 == f.Dead[0] {
			continue
		}
		tg, err := target.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		out, err := tg.Run(ctx, "wg", "show", "all", "dump")
		if err != nil {
			t.Fatalf("%s: wg show all dump: %v: %s", spec, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "wg0\t") {
			t.Errorf("%s: wg show all dump, want wg0 and 2 peers:\n%s", spec, out)
		}
		keys[strings.Fields(lines[0])[2]] = true
		if out, err := tg.Run(ctx, "readlink", "/usr/bin/ls"); err != nil || strings.TrimSpace(string(out)) != "/usr/bin/busybox" {
			t.Errorf("%s: ls is %q (%v), want BusyBox's", spec, out, err)
		}
	}
	if len(keys) != 5 {
		t.Errorf("5 answering routers show %d public keys, want one each", len(keys))
	}
	inv, err := fleet.Load(ctx, f.Inventory, fleet.LoadOptions{Limit: "fleet:!dead"})
	if err != nil || len(inv.Hosts) != 5 || inv.Hosts[0].Target.String() != f.Specs[0] {
		t.Errorf("inventory %s, fleet:!dead: %+v (%v), want the 5 answering routers", f.Inventory, inv, err)
	}
	if err := lab.Down(ctx, f.Name); err != nil {
		t.Fatal(err)
	}
	out, err := target.Local().Run(ctx, "ip", "netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), lab.Prefix+f.Name+"-") {
		t.Errorf("lab down left namespaces of fleet %s:\n%s", f.Name, out)
	}
	if _, err := os.Stat(lab.FleetDir(f.Name)); !os.IsNotExist(err) {
		t.Errorf("lab down left %s (%v)", lab.FleetDir(f.Name), err)
	}
}
