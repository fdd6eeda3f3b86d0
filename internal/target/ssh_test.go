package target_test

import (
	"context"
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
