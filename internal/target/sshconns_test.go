package target_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestSSHConnsPerTarget: how an ssh target connects is its own setting, not
// the process's: in one process, a target opened with its own connections
// runs ssh without a control socket, one in a pool starts a master with the
// pool's ControlPersist and runs its commands through the master's socket,
// and a target opened plainly shares through the process's pool, whatever
// the others were given. A stand-in for ssh writes down each command line.
func TestSSHConnsPerTarget(t *testing.T) {
	lines := targettest.RecordSSH(t)
	pool := target.NewSSHPool(7*time.Second, 4)
	t.Cleanup(pool.Close)
	t.Cleanup(target.CloseAll)

	// run opens spec with c, runs one command and returns the ssh command
	// lines it took.
	run := func(spec string, c target.SSHConns) []string {
		t.Helper()
		lines()
		tg, err := target.ParseWith(spec, target.HostSSH{Conns: c})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tg.Run(context.Background(), "true"); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		return lines()
	}
	own := run("ssh:root@own.invalid", target.SSHConns{Own: true})
	if len(own) != 1 || strings.Contains(own[0], "ControlPath") {
		t.Errorf("own connection: ssh ran %q, want one command line without a control socket", own)
	}
	pooled := run("ssh:root@pooled.invalid", target.SSHConns{Pool: pool})
	if len(pooled) != 2 || !strings.Contains(pooled[0], "ControlMaster=yes") || !strings.Contains(pooled[0], "ControlPersist=7 ") ||
		!strings.Contains(pooled[1], "ControlMaster=no") {
		t.Errorf("pooled: ssh ran %q, want a master with ControlPersist=7, then the command through it", pooled)
	}
	shared := run("ssh:root@shared.invalid", target.SSHConns{})
	if len(shared) != 2 || !strings.Contains(shared[0], "ControlPersist=30 ") || !strings.Contains(shared[1], "ControlMaster=no") {
		t.Errorf("process pool: ssh ran %q, want a master with ControlPersist=30, then the command through it", shared)
	}
	socketDir := func(line string) string {
		_, after, _ := strings.Cut(line, "ControlPath=")
		return filepath.Dir(strings.Fields(after)[0])
	}
	if len(pooled) == 2 && len(shared) == 2 && socketDir(pooled[1]) == socketDir(shared[1]) {
		t.Errorf("the exporter's pool and the process's share a socket directory: %s", socketDir(pooled[1]))
	}
	// The first target is still its own after the others shared.
	if again := run("ssh:root@own.invalid", target.SSHConns{Own: true}); len(again) != 1 || strings.Contains(again[0], "ControlPath") {
		t.Errorf("own connection after the others: ssh ran %q", again)
	}
}
