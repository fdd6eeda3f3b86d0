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
// maintainer scripts believe systemd runs) and a systemctl,
// deb-systemd-invoke and deb-systemd-helper that only write each call into
// /systemctl.log. dpkg runs maintainer scripts chrooted there, so nothing
// reaches this machine's systemd.
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
	for _, tool := range []string{"systemctl", "deb-systemd-invoke", "deb-systemd-helper"} {
		stub := "#!/bin/sh\necho \"" + tool + " $*\" >> /systemctl.log\n"
		if err := os.WriteFile(filepath.Join(root, "usr/bin", tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// systemctlCalls returns what the maintainer scripts asked systemctl and
// Debian's helpers since the last call, one call a line, and forgets it.
func systemctlCalls(t *testing.T, root string) string {
	t.Helper()
	log := filepath.Join(root, "systemctl.log")
	b, _ := os.ReadFile(log)
	os.Remove(log)
	return strings.TrimSpace(string(b))
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
// scripts asked systemd, as dh_installsystemd's do: daemon-reload after
// install, deb-systemd-invoke's try-restart on upgrade and stop on removal,
// deb-systemd-helper's enablement state (the boot hook enabled, both units
// masked on removal and forgotten on purge), never systemctl's enable,
// disable, stop or restart, which bypass policy-rc.d. And that the
// man pages, completions and the exporter's flags file are in place, and
// that the packaged exporter listens on loopback only.
func TestDebInstallsIntoCleanRoot(t *testing.T) {
	root := cleanRoot(t)
	deb := one(t, dist(t).dir, "wgperf_*_amd64.deb")

	const hook, exporter = "wgperf-fix-rollback.service", "wgperf-exporter.service"
	helper := "deb-systemd-helper unmask " + hook + "\ndeb-systemd-helper --quiet was-enabled " + hook +
		"\ndeb-systemd-helper enable " + hook + "\ndeb-systemd-helper update-state " + exporter
	dpkg(t, root, "-i", deb)
	if got, want := systemctlCalls(t, root), helper+"\nsystemctl --system daemon-reload"; got != want {
		t.Errorf("install asked:\n%s\nwant (the exporter is not enabled or started by a package):\n%s", got, want)
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
	if got, want := systemctlCalls(t, root), helper+"\nsystemctl --system daemon-reload\ndeb-systemd-invoke try-restart "+exporter; got != want {
		t.Errorf("upgrade asked:\n%s\nwant a daemon-reload and deb-systemd-invoke's try-restart:\n%s", got, want)
	}

	dpkg(t, root, "-r", "wgperf")
	if got, want := systemctlCalls(t, root), "deb-systemd-invoke stop "+exporter+"\ndeb-systemd-helper mask "+exporter+" "+hook+"\nsystemctl --system daemon-reload"; got != want {
		t.Errorf("removal asked:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "usr/bin/wgperf")); err == nil {
		t.Error("removal left /usr/bin/wgperf")
	}
	if _, err := os.Stat(filepath.Join(root, "etc/default/wgperf-exporter")); err != nil {
		t.Error("removal (not purge) deleted the owner's /etc/default/wgperf-exporter")
	}
	dpkg(t, root, "--purge", "wgperf")
	if got, want := systemctlCalls(t, root), "deb-systemd-helper purge "+exporter+" "+hook+"\ndeb-systemd-helper unmask "+exporter+" "+hook+"\nsystemctl --system daemon-reload"; got != want {
		t.Errorf("purge asked:\n%s\nwant:\n%s", got, want)
	}
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

// The .rpm's scriptlets (packaging/scripts/rpm) get the number of installed
// copies: they are run here in the clean root with each, and call systemctl
// as rpm's own macros do.
func TestRPMScriptletArguments(t *testing.T) {
	root := cleanRoot(t)
	for _, tc := range []struct {
		script, arg, want string
	}{
		{"post", "1", "systemctl --no-reload preset wgperf-fix-rollback.service\nsystemctl --system daemon-reload"},
		{"post", "2", "systemctl --system daemon-reload\nsystemctl try-restart wgperf-exporter.service"},
		{"preun", "0", "systemctl stop wgperf-exporter.service\nsystemctl --no-reload disable wgperf-exporter.service wgperf-fix-rollback.service"},
		{"preun", "1", ""},
		{"postun", "0", "systemctl --system daemon-reload"},
		{"postun", "1", ""},
	} {
		b := repoFile(t, filepath.Join("packaging/scripts/rpm", tc.script))
		if err := os.WriteFile(filepath.Join(root, "script"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chroot", root, "/bin/sh", "/script", tc.arg).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", tc.script, tc.arg, err, out)
		}
		if got := systemctlCalls(t, root); got != tc.want {
			t.Errorf("%s %s asked systemctl %q, want %q", tc.script, tc.arg, got, tc.want)
		}
	}
}
