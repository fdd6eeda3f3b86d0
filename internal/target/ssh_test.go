package target_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestSSHAgainstRealSSHD starts Debian's sshd inside lab node B and reaches it
// from node A through the WireGuard tunnel, as a user would reach a remote site.
func TestSSHAgainstRealSSHD(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "ssht"})
	ctx := context.Background()
	dir := t.TempDir()
	remote, err := target.Parse(labtest.SSHD(t, l, "b"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := remote.ReadFile(ctx, "/proc/net/snmp")
	if err != nil {
		t.Fatalf("ssh read: %v", err)
	}
	if !strings.HasPrefix(string(out), "Ip: Forwarding") {
		t.Errorf("/proc/net/snmp over ssh = %.40q", out)
	}
	// The command really ran in B: its namespace has B's WireGuard interface.
	out, err = remote.Run(ctx, "ip", "-br", "addr", "show", "dev", l.WGInterface("b"))
	if err != nil || !strings.Contains(string(out), l.Node("b").TunnelAddr) {
		t.Errorf("ip addr over ssh = %q, %v", out, err)
	}
	// Arguments with spaces and quotes survive the remote shell.
	out, err = remote.Run(ctx, "printf", "%s|", "two words", "it's")
	if err != nil || string(out) != "two words|it's|" {
		t.Errorf("quoted args = %q, %v", out, err)
	}
	// Files written over ssh land atomically with their mode.
	if err := remote.WriteFile(ctx, filepath.Join(dir, "written"), []byte("ok\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "written")); string(b) != "ok\n" {
		t.Errorf("written file = %q", b)
	}
	_, err = remote.Run(ctx, "wgperf-no-such-program")
	if !target.IsNotFound(err) {
		t.Errorf("missing remote program: err = %v, want not found", err)
	}

	// Nothing listens on 2223: the error names the target, the command and ssh's reason.
	refused, _ := target.Parse("ssh:root@" + l.Node("b").TunnelAddr + ":2223")
	_, err = refused.Run(ctx, "true")
	want := "ssh:root@10.77.0.2:2223: true: ssh: connect to host 10.77.0.2 port 2223: Connection refused"
	if err == nil || err.Error() != want {
		t.Errorf("refused error = %v\nwant %s", err, want)
	}
}

// TestSSHSharesOneConnection: every command of a run, sequential or 12 at
// once, rides one TCP connection to the host; CloseAll ends it and removes the
// socket directory; a ControlPath in the user's ssh config does not divert or
// break it; opened with connections of its own, each command connects by
// itself (so the counter below really counts).
func TestSSHSharesOneConnection(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "rtmux"})
	spec := labtest.SSHD(t, l, "b")
	syns := labtest.SYNCounter(t, l, "b", labtest.SSHPort)
	ctx := context.Background()
	t.Cleanup(target.CloseAll)

	runMany := func(t *testing.T, c target.SSHConns) {
		t.Helper()
		remote, err := target.ParseWith(spec, target.HostSSH{Conns: c})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if out, err := remote.Run(ctx, "echo", "seq"); err != nil || string(out) != "seq\n" {
				t.Fatalf("run %d: %q, %v", i, out, err)
			}
		}
		errs := make(chan error, 12)
		for i := 0; i < 12; i++ { // queued on the one connection
			go func() {
				_, err := remote.Run(ctx, "sleep", "0.2")
				errs <- err
			}()
		}
		for i := 0; i < 12; i++ {
			if err := <-errs; err != nil {
				t.Fatalf("parallel run: %v", err)
			}
		}
	}
	// The setup's own probes ("true" until sshd answered) may have connected.
	target.CloseAll()
	base := syns()
	runMany(t, target.SSHConns{})
	if n := syns() - base; n != 1 {
		t.Errorf("17 commands opened %d connections, want 1", n)
	}
	// This process's own: another wgperf on the machine (a lab test beside
	// this one) keeps its masters in directories of its own pid.
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("wgperf-ssh-%d-*", os.Getpid())))
	target.CloseAll()
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			if entries, _ := os.ReadDir(d); len(entries) > 0 {
				t.Errorf("socket directory %s still there after CloseAll: %v", d, entries)
			}
		}
	}
	// The master is gone: nothing in A is connected to sshd any more.
	out, _ := target.Netns(l.Netns("a")).Run(ctx, "ss", "-Htn", "state", "established", "dport", "= :2222")
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("connections left after CloseAll:\n%s", out)
	}

	// A user's config with its own ControlPath: ours wins, theirs stays unused.
	userDir := t.TempDir()
	cfg := filepath.Join(userDir, "ssh_config")
	if err := os.WriteFile(cfg, []byte("Host *\n  ControlMaster auto\n  ControlPath "+userDir+"/cm-%C\n  ControlPersist 600\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	oldCmd := target.SSHCommand
	target.SSHCommand = append(append([]string{}, oldCmd...), "-F", cfg)
	base = syns()
	runMany(t, target.SSHConns{})
	target.CloseAll()
	target.SSHCommand = oldCmd
	if n := syns() - base; n != 1 {
		t.Errorf("with the user's ControlPath: %d connections, want 1", n)
	}
	if m, _ := filepath.Glob(filepath.Join(userDir, "cm-*")); len(m) > 0 {
		t.Errorf("the user's ControlPath was used: %v", m)
	}

	base = syns()
	runMany(t, target.SSHConns{Own: true})
	if n := syns() - base; n != 17 {
		t.Errorf("without sharing: %d connections, want 17", n)
	}
}
