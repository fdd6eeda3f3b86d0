package packaging

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// cleanRoot is an empty Debian-like root for dpkg --root: BusyBox as the
// shell and core tools, an empty dpkg database, /run/systemd/system (so the
// maintainer scripts believe systemd runs) and a systemctl that only writes
// each call into /systemctl.log. dpkg runs maintainer scripts chrooted
// there, so nothing reaches this machine's systemd.
func cleanRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("installing a package into a clean root needs root (chroot)")
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed (make deps): the clean root needs a shell")
	}
	if _, err := exec.LookPath("dpkg"); err != nil {
		t.Skip("dpkg is not installed")
	}
	root := t.TempDir()
	for _, d := range []string{"bin", "usr/bin", "sbin", "usr/sbin", "etc", "tmp", "run/systemd/system", "var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"var/lib/dpkg/status", "var/lib/dpkg/available"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// BusyBox and, when it is not static, the libraries it loads.
	files := []string{busybox}
	if out, err := exec.Command("ldd", busybox).Output(); err == nil {
		files = append(files, regexp.MustCompile(`(/\S+)\s+\(0x`).FindAllString(string(out), -1)...)
	}
	for _, f := range files {
		f = strings.Fields(f)[0]
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, f)
		if f == busybox {
			dst = filepath.Join(root, "bin/busybox")
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"sh", "rm", "cat", "mkdir", "mv", "ln", "chmod", "grep", "sed", "test", "[", "true", "env"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", tool)); err != nil {
			t.Fatal(err)
		}
	}
	// Maintainer scripts send output to /dev/null, which must be the device.
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\necho \"$*\" >> /systemctl.log\n"
	if err := os.WriteFile(filepath.Join(root, "usr/bin/systemctl"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// systemctlCalls returns what the maintainer scripts asked systemctl since
// the last call, and forgets it.
func systemctlCalls(t *testing.T, root string) []string {
	t.Helper()
	log := filepath.Join(root, "systemctl.log")
	b, _ := os.ReadFile(log)
	os.Remove(log)
	return strings.Fields(string(b))
}

func dpkg(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("dpkg", append([]string{"--root=" + root, "--force-bad-path", "--force-not-root", "--log=/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dpkg %v: %v\n%s", args, err, out)
	}
}

// TestDebInstallsIntoCleanRoot installs the amd64 .deb into an empty root
// with dpkg, upgrades it and removes it, and checks what the maintainer
// scripts asked systemd (as dh_installsystemd's do: daemon-reload after
// install, try-restart on upgrade, stop and disable on removal), that the
// man pages, completions and the exporter's flags file are in place, and
// that the packaged exporter listens on loopback only.
func TestDebInstallsIntoCleanRoot(t *testing.T) {
	root := cleanRoot(t)
	deb := one(t, dist(t).dir, "wgperf_*_amd64.deb")

	dpkg(t, root, "-i", deb)
	if got := strings.Join(systemctlCalls(t, root), " "); got != "--system daemon-reload" {
		t.Errorf("install asked systemctl %q, want a daemon-reload only (the exporter is not enabled by a package)", got)
	}
	for _, f := range []string{"usr/bin/wgperf", "usr/lib/systemd/system/wgperf-exporter.service",
		"usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf", "etc/default/wgperf-exporter",
		"usr/share/man/man1/wgperf.1.gz", "usr/share/man/man1/wgperf-exporter.1.gz", "usr/share/bash-completion/completions/wgperf",
		"usr/share/zsh/vendor-completions/_wgperf", "usr/share/fish/vendor_completions.d/wgperf.fish", "usr/share/doc/wgperf/web-config.yml"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("installed package lacks /%s", f)
		}
	}
	checkLoopbackOnly(t, root)

	// The same version again is an upgrade to dpkg: the running exporter
	// must pick up the new binary.
	dpkg(t, root, "-i", deb)
	if got := strings.Join(systemctlCalls(t, root), " "); got != "--system daemon-reload try-restart wgperf-exporter.service" {
		t.Errorf("upgrade asked systemctl %q, want a daemon-reload and a try-restart", got)
	}

	dpkg(t, root, "-r", "wgperf")
	if got := strings.Join(systemctlCalls(t, root), " "); got != "stop wgperf-exporter.service disable wgperf-exporter.service --system daemon-reload" {
		t.Errorf("removal asked systemctl %q, want stop, disable, then daemon-reload", got)
	}
	if _, err := os.Stat(filepath.Join(root, "usr/bin/wgperf")); err == nil {
		t.Error("removal left /usr/bin/wgperf")
	}
	if _, err := os.Stat(filepath.Join(root, "etc/default/wgperf-exporter")); err != nil {
		t.Error("removal (not purge) deleted the owner's /etc/default/wgperf-exporter")
	}
	dpkg(t, root, "--purge", "wgperf")
	if _, err := os.Stat(filepath.Join(root, "etc/default/wgperf-exporter")); err == nil {
		t.Error("purge left /etc/default/wgperf-exporter")
	}
}

// checkLoopbackOnly reads the flags the installed unit runs the exporter
// with (its Environment=, then the EnvironmentFile=, which wins) and wants
// every listening address on loopback.
func checkLoopbackOnly(t *testing.T, root string) {
	t.Helper()
	args := ""
	for _, f := range []string{"usr/lib/systemd/system/wgperf-exporter.service", "etc/default/wgperf-exporter"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^(?:Environment=)?"?WGPERF_EXPORTER_ARGS=([^"\n]*)"?$`).FindAllStringSubmatch(string(b), -1) {
			args = m[1]
		}
	}
	addrs := regexp.MustCompile(`--(?:web\.listen-address|listen)[= ](\S+)`).FindAllStringSubmatch(args, -1)
	if len(addrs) == 0 {
		t.Fatalf("the packaged exporter's flags %q name no --web.listen-address: it would listen on every address", args)
	}
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a[1])
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("the packaged exporter listens on %s, want loopback only (%q)", a[1], args)
		}
	}
	if !strings.Contains(args, "--web.listen-address") {
		t.Errorf("flags %q: want node_exporter's --web.listen-address", args)
	}
}

// The .rpm runs the same scripts with rpm's arguments (the number of
// installed copies): they are run here in the clean root with each.
func TestRPMScriptletArguments(t *testing.T) {
	root := cleanRoot(t)
	for _, tc := range []struct {
		script, arg, want string
	}{
		{"postinstall.sh", "1", "--no-reload preset wgperf-fix-rollback.service --system daemon-reload"},
		{"postinstall.sh", "2", "--system daemon-reload try-restart wgperf-exporter.service"},
		{"preremove.sh", "0", "stop wgperf-exporter.service disable wgperf-exporter.service --no-reload disable wgperf-fix-rollback.service"},
		{"preremove.sh", "1", ""},
		{"postremove.sh", "0", "--system daemon-reload"},
		{"postremove.sh", "1", ""},
	} {
		b := repoFile(t, filepath.Join("packaging/scripts", tc.script))
		if err := os.WriteFile(filepath.Join(root, "script"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chroot", root, "/bin/sh", "/script", tc.arg).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", tc.script, tc.arg, err, out)
		}
		if got := strings.Join(systemctlCalls(t, root), " "); got != tc.want {
			t.Errorf("%s %s asked systemctl %q, want %q", tc.script, tc.arg, got, tc.want)
		}
	}
}
