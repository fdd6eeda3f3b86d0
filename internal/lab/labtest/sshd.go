package labtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// SSHPort is the port SSHD listens on (not 22, so no real sshd is in the way).
const SSHPort = 2222

// SSHD starts Debian's sshd in a lab node, listening on the node's tunnel
// address, and points the ssh targets at it: target.SSHCommand runs ssh inside
// node "a" (so a node other than "a" is reached through the WireGuard tunnel,
// as a user reaches a remote site) and target.SSHOptions trust a throw-away
// host key and use a throw-away user key. It returns the target spec
// "ssh:root@ADDR:2222", answering by the time SSHD returns. Shared ssh
// connections are closed, sshd is stopped and the ssh settings restored in
// t.Cleanup.
//
// The ssh settings are package globals: tests that call SSHD must not run in
// parallel with other ssh users.
func SSHD(t testing.TB, l *lab.Lab, node string) string {
	t.Helper()
	return SSHDs(t, l, "", node)[0]
}

// SSHDs is SSHD on several nodes at once, with one user key for all; bin,
// when set, is a directory put first on the PATH of every ssh session there
// and, for the test's life, on target.Path, which wgperf's remote commands
// run with (a wgperf installed on the remote hosts).
func SSHDs(t testing.TB, l *lab.Lab, bin string, nodes ...string) []string {
	t.Helper()
	testutil.RequireTools(t, "ssh", "ssh-keygen", "/usr/sbin/sshd")
	ctx := context.Background()
	dir := t.TempDir()
	host := target.Local()
	for _, k := range []string{"host_key", "user_key"} {
		if out, err := host.Run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("authorized_keys", pub)
	// bash sources root's ~/.bashrc for ssh commands only at shell level 1.
	// Keep it out: a developer's shell setup (pyenv's rehash waits up to
	// 60 s on a lock that a killed session left) must not time the tests.
	env := "SetEnv SHLVL=1"
	if bin != "" {
		env += " PATH=" + bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		old := target.Path
		target.Path = bin + ":" + old
		t.Cleanup(func() { target.Path = old })
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	var specs []string
	var daemons []*target.Process
	for _, node := range nodes {
		n := l.Node(node)
		if n == nil || n.TunnelAddr == "" {
			t.Fatalf("lab %s: node %q has no tunnel address for sshd", l.Config.Name, node)
		}
		config := "sshd_config_" + node
		write(config, []byte(strings.Join([]string{
			fmt.Sprintf("Port %d", SSHPort), "ListenAddress " + n.TunnelAddr,
			"HostKey " + filepath.Join(dir, "host_key"),
			"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
			"PermitRootLogin prohibit-password", "PasswordAuthentication no",
			"KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PidFile none",
			// Many short sessions arrive at once from parallel collection.
			"MaxStartups 100", "MaxSessions 100", env,
		}, "\n")+"\n"))
		sshd, err := l.Target(node).Start(ctx, "/usr/sbin/sshd", "-D", "-e", "-f", filepath.Join(dir, config))
		if err != nil {
			t.Fatalf("start sshd in %s: %v", node, err)
		}
		t.Cleanup(func() { _ = sshd.Stop(time.Second) })
		specs = append(specs, fmt.Sprintf("ssh:root@%s:%d", n.TunnelAddr, SSHPort))
		daemons = append(daemons, sshd)
	}

	oldCmd, oldOpts := target.SSHCommand, target.SSHOptions
	target.SSHCommand = []string{"ip", "netns", "exec", l.Netns("a"), "ssh"}
	target.SSHOptions = []string{"StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null",
		"IdentityFile=" + filepath.Join(dir, "user_key"), "IdentitiesOnly=yes", "LogLevel=ERROR"}
	t.Cleanup(func() { target.SSHCommand, target.SSHOptions = oldCmd, oldOpts })
	// Shared connections end before sshd and the settings go.
	t.Cleanup(target.CloseAll)

	for i, spec := range specs {
		remote, err := target.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		for try := 0; ; try++ { // sshd needs a moment to listen
			_, err = remote.Run(ctx, "true")
			if err == nil {
				break
			}
			if try == 50 || daemons[i].Exited() {
				t.Fatalf("sshd at %s does not answer: %v (sshd said: %s)", spec, err, daemons[i].Stderr())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return specs
}

// SYNCounter counts TCP connection attempts to port in a lab node (an nft
// counter on SYNs in the node's input hook), so a test can prove how many ssh
// connections a command opened. The returned function reads the count.
func SYNCounter(t testing.TB, l *lab.Lab, node string, port int) func() int {
	t.Helper()
	ctx := context.Background()
	tg := l.Target(node)
	const table = "wgperf_test_syn"
	script := fmt.Sprintf("table inet %s {\n counter syns {}\n chain in {\n  type filter hook input priority -300; policy accept;\n"+
		"  tcp dport %d tcp flags & (syn | ack) == syn counter name syns\n }\n}\n", table, port)
	if out, err := tg.RunInput(ctx, []byte(script), "nft", "-f", "-"); err != nil {
		t.Fatalf("nft syn counter in %s: %v: %s", node, err, out)
	}
	return func() int {
		t.Helper()
		out, err := tg.Run(ctx, "nft", "list", "counter", "inet", table, "syns")
		if err != nil {
			t.Fatalf("read syn counter: %v", err)
		}
		f := strings.Fields(string(out))
		for i, w := range f {
			if w == "packets" && i+1 < len(f) {
				n, err := strconv.Atoi(f[i+1])
				if err != nil {
					t.Fatalf("syn counter %q", out)
				}
				return n
			}
		}
		t.Fatalf("syn counter: no packets in %q", out)
		return 0
	}
}

// Router points the ssh targets at the lab's OpenWrt-like router node (the lab
// must be up with Config.Router): ssh runs in node R and reaches A's dropbear
// with the lab's throw-away keys. It returns the target spec once a command
// answers there; the ssh settings are restored in t.Cleanup.
func Router(t testing.TB, l *lab.Lab) string {
	t.Helper()
	testutil.RequireTools(t, "ssh")
	spec, ns, opts := l.RouterSSH()
	oldCmd, oldOpts := target.SSHCommand, target.SSHOptions
	target.SSHCommand = []string{"ip", "netns", "exec", ns, "ssh"}
	target.SSHOptions = opts
	t.Cleanup(func() { target.SSHCommand, target.SSHOptions = oldCmd, oldOpts })
	t.Cleanup(target.CloseAll)
	remote, err := target.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for i := 0; ; i++ {
		if out, err = remote.Run(context.Background(), "true"); err == nil {
			return spec
		}
		if i == 50 {
			t.Fatalf("router %s does not answer: %v: %s", spec, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
