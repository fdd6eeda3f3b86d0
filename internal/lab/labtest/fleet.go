package labtest

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// Fleet starts a router fleet (lab.FleetUp) for the test, points the ssh
// targets at it (ssh from the fleet's hub namespace with its key and
// known_hosts) and removes it, shared ssh connections first, in t.Cleanup.
// The ssh settings are package globals: tests that call Fleet must not run
// in parallel with other ssh users.
func Fleet(t testing.TB, cfg lab.FleetConfig) *lab.Fleet {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "nft", "wg", "ssh", "busybox", "dropbear", "dropbearkey", "ssh-keygen", "unshare")
	exe := Binary(t)
	_ = lab.Down(context.Background(), cfg.Name)
	f, err := lab.FleetUp(context.Background(), cfg, exe)
	t.Cleanup(func() {
		if err := lab.Down(context.Background(), cfg.Name); err != nil {
			t.Errorf("lab down %s: %v", cfg.Name, err)
		}
	})
	if err != nil {
		t.Fatalf("fleet up: %v", err)
	}
	oldCmd, oldOpts := target.SSHCommand, target.SSHOptions
	target.SSHCommand, target.SSHOptions = f.FleetSSH()
	t.Cleanup(func() { target.SSHCommand, target.SSHOptions = oldCmd, oldOpts })
	t.Cleanup(target.CloseAll)
	// dropbear listens a moment after it starts: wait for the first router.
	first, err := target.Parse(f.Specs[0])
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		out, err := first.Run(context.Background(), "true")
		if err == nil {
			break
		}
		if try == 50 {
			t.Fatalf("fleet router %s does not answer: %v: %s", f.Specs[0], err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return f
}
