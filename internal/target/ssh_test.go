package target_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestSSHAgainstRealSSHD starts Debian's sshd inside lab node B and reaches it
// from node A through the WireGuard tunnel, as a user would reach a remote site.
func TestSSHAgainstRealSSHD(t *testing.T) {
	testutil.RequireTools(t, "ssh", "ssh-keygen", "/usr/sbin/sshd")
	l := labtest.Up(t, lab.Config{Name: "ssht"})
	ctx := context.Background()
	dir := t.TempDir()
	host := target.Local()
	for _, k := range []string{"host_key", "user_key"} {
		if _, err := host.Run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)
	conf := strings.Join([]string{
		"Port 2222", "ListenAddress " + l.Node("b").TunnelAddr,
		"HostKey " + filepath.Join(dir, "host_key"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PermitRootLogin prohibit-password", "PasswordAuthentication no",
		"KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PidFile none",
	}, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(conf), 0o600)
	os.MkdirAll("/run/sshd", 0o755) // privilege separation directory
	sshd, err := l.Target("b").Start(ctx, "/usr/sbin/sshd", "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	if err != nil {
		t.Fatal(err)
	}
	defer sshd.Stop(time.Second)

	oldCmd, oldOpts := target.SSHCommand, target.SSHOptions
	target.SSHCommand = []string{"ip", "netns", "exec", l.Netns("a"), "ssh"}
	target.SSHOptions = []string{"StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null",
		"IdentityFile=" + filepath.Join(dir, "user_key"), "LogLevel=ERROR"}
	t.Cleanup(func() { target.SSHCommand, target.SSHOptions = oldCmd, oldOpts })

	remote, err := target.Parse("ssh:root@" + l.Node("b").TunnelAddr + ":2222")
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for i := 0; i < 50; i++ { // sshd needs a moment to listen
		if out, err = remote.ReadFile(ctx, "/proc/net/snmp"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("ssh read: %v (sshd said: %s)", err, sshd.Stderr())
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
