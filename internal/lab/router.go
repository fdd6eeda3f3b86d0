package lab

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// The router node: with Config.Router, node A is also reachable the way one
// reaches an OpenWrt box — ssh to dropbear — and whatever runs in that session
// sees a default OpenWrt userland: BusyBox applets, nft, wg, uci, logread, and
// nothing else (no iproute2 "ip -j", ethtool, conntrack, iperf3, tcpdump).
// Commands run through "lab exec" or netns:… still get the host's tools.
//
// dropbear runs in a mount namespace of its own (unshare -m, private
// propagation) where the node's root folder is bind-mounted over /usr/bin,
// /usr/sbin (/bin and /sbin point there on Debian), /usr/local, /usr/share,
// /etc and /root, and /tmp and /var are fresh tmpfs, as on OpenWrt. The
// libraries in /lib stay the host's.

// RouterSSHPort is the port dropbear listens on (A's uplink addresses).
const RouterSSHPort = 2222

//go:embed router/uci router/logread router/logger router/ifup router/banip
var routerScripts embed.FS

// routerLeaveOut are BusyBox applets a default OpenWrt image does not carry
// (or carries from another package with other behaviour): Debian's ifupdown
// ifup/ifdown (netifd's take their place: router/ifup), and
// syslogd/klogd/logger/logread, whose place logd takes (and a syslogd here
// would take over the host's /dev/log).
var routerLeaveOut = map[string]bool{"ifup": true, "ifdown": true, "syslogd": true, "klogd": true, "logger": true, "logread": true}

// routerTools are host programs copied into the router, by OpenWrt package:
// nftables (fw4), wireguard-tools, dropbear.
var routerTools = []string{"nft", "wg", "dropbear"}

// RouterDir is the router node's root folder (bin, etc, root) in the lab's state folder.
func (l *Lab) RouterDir() string { return filepath.Join(StateDir, l.Config.Name, "router") }

// RouterSSH returns how to reach the router node: the ssh target spec, the
// namespace ssh must run in (R, the ISP side of A's uplinks) and the options
// that trust its throw-away host key and use its throw-away user key.
func (l *Lab) RouterSSH() (spec, netns string, options []string) {
	dir := l.RouterDir()
	return fmt.Sprintf("ssh:root@%s:%d", primaryA, RouterSSHPort), l.Netns("r"),
		[]string{"StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null",
			"IdentityFile=" + filepath.Join(dir, "id_ed25519"), "IdentitiesOnly=yes", "LogLevel=ERROR"}
}

// startRouter builds the router's root folder and starts dropbear in it.
func (l *Lab) startRouter(ctx context.Context) error {
	n := l.Nodes["a"]
	dir := l.RouterDir()
	fsRoot := filepath.Join(dir, "root")
	for _, d := range []string{"usr/bin", "usr/sbin", "usr/local", "usr/share/nftables.d/ruleset-post", "etc/config", "etc/dropbear", "root/.ssh", "log"} {
		if err := os.MkdirAll(filepath.Join(fsRoot, d), 0o755); err != nil {
			return err
		}
	}
	if err := l.routerUserland(ctx, fsRoot); err != nil {
		return err
	}
	if err := l.routerEtc(ctx, dir, fsRoot); err != nil {
		return err
	}
	logFile := l.logPath(n, "dropbear")
	bind := func(from, to string) string {
		return shell.Join("/usr/bin/mount", "--bind", filepath.Join(fsRoot, from), to)
	}
	// /usr/bin goes last: until then the host's mount and sh are still there.
	inner := strings.Join([]string{
		"set -e",
		bind("etc", "/etc"), bind("root", "/root"),
		shell.Join("/usr/bin/mount", "-t", "tmpfs", "-o", "mode=1777,size=16m", "tmpfs", "/tmp"),
		// /var is RAM on OpenWrt; /var/run still leads to the lab's UAPI sockets.
		shell.Join("/usr/bin/mount", "-t", "tmpfs", "-o", "mode=0755,size=16m", "tmpfs", "/var"),
		"mkdir -p /var/lib /var/log /var/lock && ln -s /run /var/run",
		// /usr/local is empty on OpenWrt, and on the PATH dropbear sets;
		// /usr/share holds fw4's nftables.d, where fixes drop rule files.
		bind("usr/local", "/usr/local"), bind("usr/share", "/usr/share"),
		bind("usr/sbin", "/usr/sbin"), bind("usr/bin", "/usr/bin"),
		"mkdir -p /tmp/log /tmp/run",
		shell.Join("exec", "/usr/sbin/dropbear", "-F", "-E", "-s", "-p", strconv.Itoa(RouterSSHPort),
			"-r", "/etc/dropbear/dropbear_ed25519_host_key", "-P", "/tmp/run/dropbear.pid"),
	}, "\n")
	// dropbear and what it runs are the router's own processes: a node's priority.
	script := fmt.Sprintf("%s </dev/null >>%s 2>&1 & echo $!",
		nodeSession("unshare", "-m", "--propagation", "private", "sh", "-c", inner), shell.Join(logFile))
	out, err := target.Netns(n.Netns).Run(ctx, "sh", "-c", script)
	if err != nil {
		return fmt.Errorf("start the router's dropbear: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("start the router's dropbear: pid %q", out)
	}
	n.SSHPID = pid
	listening := func() bool {
		b, err := l.Target("a").ReadFile(ctx, "/proc/net/tcp")
		socks, _ := parse.ParseProcNetTCP(bytes.NewReader(b), parse.TCPListen)
		return err == nil && slices.ContainsFunc(socks, func(s parse.TCPSocket) bool { return s.LocalPort == RouterSSHPort })
	}
	return l.waitFor(listening, pid, "the router's dropbear", logFile)
}

// routerUserland fills usr/bin and usr/sbin: BusyBox applets where Debian's
// busybox puts them, the router tools, and the uci, logread and logger scripts.
func (l *Lab) routerUserland(ctx context.Context, fsRoot string) error {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("the router node needs busybox: apt-get install busybox dropbear-bin")
	}
	if err := copyFile(bb, filepath.Join(fsRoot, "usr/bin/busybox"), 0o755); err != nil {
		return err
	}
	list, err := target.Local().Run(ctx, bb, "--list-full")
	if err != nil {
		return err
	}
	for _, p := range strings.Fields(string(list)) {
		name := filepath.Base(p)
		if routerLeaveOut[name] || name == "busybox" {
			continue
		}
		d := "usr/bin"
		if strings.HasPrefix(p, "sbin/") || strings.HasPrefix(p, "usr/sbin/") {
			d = "usr/sbin"
		}
		if err := os.Symlink("/usr/bin/busybox", filepath.Join(fsRoot, d, name)); err != nil && !os.IsExist(err) {
			return err
		}
	}
	for _, tool := range routerTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			return fmt.Errorf("the router node needs %s: apt-get install busybox dropbear-bin nftables wireguard-tools", tool)
		}
		if err := copyFile(p, filepath.Join(fsRoot, "usr/sbin", tool), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(fsRoot, "usr/sbin/lab-login-shell"), []byte(routerLoginShell), 0o755); err != nil {
		return err
	}
	for _, s := range []struct{ script, dst string }{
		{"uci", "usr/sbin/uci"}, {"logread", "usr/sbin/logread"}, {"logger", "usr/bin/logger"},
		{"ifup", "usr/sbin/ifup"}, {"ifup", "usr/sbin/ifdown"},
	} {
		b, err := routerScripts.ReadFile("router/" + s.script)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(fsRoot, s.dst), b, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// routerLoginShell is root's login shell on the router node: BusyBox ash in
// an autogroup at the node's priority. dropbear starts each session with
// setsid, which gives it a fresh autogroup at nice 0, and the scheduler
// shares the CPU between autogroups first: beside a build loop, a health
// checker's ping loop run over ssh fell below the rate a limiter trips at.
var routerLoginShell = fmt.Sprintf(`#!/usr/bin/busybox sh
# wgperf lab: sessions run at the node's priority, as its other processes do.
echo %d >/proc/self/autogroup 2>/dev/null
exec /usr/bin/busybox ash "$@"
`, nodeNice)

// routerEtc writes the router's /etc: accounts (root's shell is ash, through routerLoginShell), the
// dropbear keys, /etc/openwrt_release and the uci configs of the multi-WAN router case's
// multi-WAN router, and the files the host's dynamic loader needs.
func (l *Lab) routerEtc(ctx context.Context, dir, fsRoot string) error {
	etc := filepath.Join(fsRoot, "etc")
	files := map[string]string{
		"passwd":          "root:x:0:0:root:/root:/usr/sbin/lab-login-shell\n",
		"group":           "root:x:0:\n",
		"shadow":          "root:*:0:0:99999:7:::\n",
		"shells":          "/bin/ash\n/bin/sh\n/usr/sbin/lab-login-shell\n",
		"nsswitch.conf":   "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
		"hosts":           "127.0.0.1 localhost\n",
		"hostname":        "OpenWrt\n",
		"openwrt_release": openwrtRelease,
		"config/network":  l.routerNetworkConfig(),
		"config/system":   "\nconfig system\n\toption hostname 'OpenWrt'\n",
		"sysupgrade.conf": "## Files and folders a sysupgrade keeps, one a line (base-files ships this file).\n",
	}
	if l.Config.ICMPLimit > 0 {
		b, err := routerScripts.ReadFile("router/banip")
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(etc, "init.d"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(etc, "init.d/banip"), b, 0o755); err != nil {
			return err
		}
		files["config/banip"] = fmt.Sprintf("\nconfig banip 'global'\n\toption ban_enabled '1'\n\toption ban_icmplimit '%d'\n", l.Config.ICMPLimit)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	for _, f := range []string{"ld.so.cache", "protocols", "services"} {
		if err := copyFile("/etc/"+f, filepath.Join(etc, f), 0o644); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	host := target.Local()
	if out, err := host.Run(ctx, "dropbearkey", "-t", "ed25519", "-f", filepath.Join(etc, "dropbear/dropbear_ed25519_host_key")); err != nil {
		return fmt.Errorf("dropbearkey: %v: %s", err, out)
	}
	key := filepath.Join(dir, "id_ed25519")
	if out, err := host.Run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wgperf-lab", "-f", key); err != nil {
		return fmt.Errorf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		return err
	}
	// OpenWrt's dropbear reads /etc/dropbear/authorized_keys for root;
	// Debian's reads ~/.ssh/authorized_keys: give both.
	for _, p := range []string{"etc/dropbear/authorized_keys", "root/.ssh/authorized_keys"} {
		if err := os.WriteFile(filepath.Join(fsRoot, p), pub, 0o600); err != nil {
			return err
		}
	}
	return os.Chmod(filepath.Join(fsRoot, "root/.ssh"), 0o700)
}

const openwrtRelease = `DISTRIB_ID='OpenWrt'
DISTRIB_RELEASE='23.05.5'
DISTRIB_REVISION='r24106-10cc5fcd00'
DISTRIB_TARGET='x86/64'
DISTRIB_ARCH='x86_64'
DISTRIB_DESCRIPTION='OpenWrt 23.05.5 (wgperf lab router)'
`

// routerWGName is the router node's WireGuard interface ("wg_NAME_a",
// "wg_NAME_a1"...): unique on the host, as the UAPI socket folder is shared.
func routerWGName(lab, suffix string) string { return "wg_" + lab + "_a" + suffix }

// routerNetworkConfig is /etc/config/network as netifd would have it for the
// lab's A: its uplinks and the WireGuard interface to B.
func (l *Lab) routerNetworkConfig() string {
	var b strings.Builder
	b.WriteString("\nconfig interface 'loopback'\n\toption device 'lo'\n\toption proto 'static'\n\toption ipaddr '127.0.0.1'\n\toption netmask '255.0.0.0'\n")
	fmt.Fprintf(&b, "\nconfig interface 'wan'\n\toption device 'eth0'\n\toption proto 'static'\n\toption ipaddr '%s'\n\toption netmask '255.255.255.0'\n\toption gateway '%s'\n\toption metric '10'\n", primaryA, primaryGW)
	if l.Config.Topology == MultiWAN {
		fmt.Fprintf(&b, "\nconfig interface 'wan5g'\n\toption device 'eth1'\n\toption proto 'static'\n\toption ipaddr '%s'\n\toption netmask '255.255.255.0'\n\toption gateway '%s'\n\toption metric '20'\n", backupA, backupGW)
	}
	wg := routerWGName(l.Config.Name, "")
	fmt.Fprintf(&b, "\nconfig interface '%s'\n\toption proto 'wireguard'\n\toption listen_port '%d'\n\tlist addresses '%s/24'\n", wg, WGPort, tunnelA)
	fmt.Fprintf(&b, "\nconfig wireguard_%s\n\toption description 'site B'\n\toption endpoint_host '%s'\n\toption endpoint_port '%d'\n\tlist allowed_ips '%s/32'\n\tlist allowed_ips '%s'\n",
		wg, endpointB, WGPort, tunnelB, SiteBNet)
	return b.String()
}

func copyFile(from, to string, perm os.FileMode) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// RouterHint tells a person how to reach the router node.
func (l *Lab) RouterHint() string {
	spec, ns, opts := l.RouterSSH()
	args := []string{"ip", "netns", "exec", ns, "ssh"}
	for _, o := range opts[:3] {
		args = append(args, "-o", o)
	}
	args = append(args, "-p", strconv.Itoa(RouterSSHPort), "root@"+primaryA)
	return fmt.Sprintf("router: node a also answers as an OpenWrt box (dropbear, BusyBox, nft, wg, uci, logread) at %s from namespace %s:\n  %s\n",
		spec, ns, shell.Join(args[0], args[1:]...))
}

// routerPackages are the OpenWrt packages RouterInstall can add to the router
// node, with the host programs that stand in for them and where OpenWrt puts
// them.
var routerPackages = map[string][]struct{ prog, dir string }{
	"ip-full":       {{"ip", "usr/sbin"}},
	"tc-full":       {{"tc", "usr/sbin"}},
	"iputils-ping":  {{"ping", "usr/bin"}},
	"iperf3":        {{"iperf3", "usr/bin"}},
	"ethtool":       {{"ethtool", "usr/sbin"}},
	"conntrack":     {{"conntrack", "usr/sbin"}},
	"tcpdump":       {{"tcpdump", "usr/sbin"}},
	"iptables-nft":  {{"iptables-save", "usr/sbin"}},
	"ip6tables-nft": {{"ip6tables-save", "usr/sbin"}},
}

// RouterInstall is "opkg install PKG..." on the router node: it puts the
// host's program for each package into the router's userland (replacing the
// BusyBox applet of the same name), visible at once to new ssh sessions.
func (l *Lab) RouterInstall(pkgs ...string) error {
	if !l.Config.Router {
		return fmt.Errorf("lab %s has no router node (lab up --router)", l.Config.Name)
	}
	fsRoot := filepath.Join(l.RouterDir(), "root")
	for _, pkg := range pkgs {
		progs, ok := routerPackages[pkg]
		if !ok {
			return fmt.Errorf("router: no package %q here (have %s)", pkg, strings.Join(sortedKeys(routerPackages), ", "))
		}
		for _, p := range progs {
			from, err := exec.LookPath(p.prog)
			if err != nil {
				return fmt.Errorf("router: package %s needs the host's %s: %v", pkg, p.prog, err)
			}
			for _, d := range []string{"usr/bin", "usr/sbin"} {
				_ = os.Remove(filepath.Join(fsRoot, d, p.prog)) // the BusyBox applet
			}
			if err := copyFile(from, filepath.Join(fsRoot, p.dir, p.prog), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
