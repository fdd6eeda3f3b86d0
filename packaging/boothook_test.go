package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// nfpmContents are the files .goreleaser.yaml puts into the .deb and .rpm.
func nfpmContents(t *testing.T) []struct{ Src, Dst, Type, Packager string } {
	t.Helper()
	var conf struct {
		Nfpms []struct {
			Contents []struct{ Src, Dst, Type, Packager string }
		}
	}
	if err := yaml.Unmarshal(repoFile(t, ".goreleaser.yaml"), &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.Nfpms) != 1 {
		t.Fatalf("want one nfpms entry, found %d", len(conf.Nfpms))
	}
	return conf.Nfpms[0].Contents
}

// Issue 40: the boot hook is enabled the distribution's way, so that
// "systemctl is-enabled wgperf-fix-rollback" tells the truth and "systemctl
// disable" stops it: no vendor .wants link in the packages (systemd runs a
// unit it links whatever is-enabled says, and disable cannot remove a link
// under /usr/lib), a preset for rpm's %post, deb-systemd-helper in the
// postinst.
func TestBootHookEnabledTheDistributionsWay(t *testing.T) {
	preset := ""
	for _, c := range nfpmContents(t) {
		if strings.Contains(c.Dst, ".wants/") || strings.Contains(c.Dst, ".requires/") {
			t.Errorf("the packages ship %s (%s): a vendor link enables the unit behind systemctl's back", c.Dst, c.Type)
		}
		if strings.HasPrefix(c.Dst, "/usr/lib/systemd/system-preset/") {
			if c.Packager != "rpm" {
				t.Errorf("preset %s is packaged for %q, want rpm (Debian enables with deb-systemd-helper)", c.Dst, c.Packager)
			}
			preset = string(repoFile(t, c.Src))
		}
	}
	if !strings.Contains("\n"+preset, "\nenable wgperf-fix-rollback.service\n") {
		t.Errorf("no preset line \"enable wgperf-fix-rollback.service\" in the .rpm (preset file: %q)", preset)
	}

	// The maintainer scripts, run with stub helpers that only log their calls.
	for _, tc := range []struct {
		script, arg, want, not string
	}{
		{"deb/postinst", "configure", "deb-systemd-helper enable wgperf-fix-rollback.service", "systemctl enable"},
		{"deb/postinst", "configure 0.9.0", "deb-systemd-helper enable wgperf-fix-rollback.service", "systemctl enable"},
		{"rpm/post", "1", "systemctl --no-reload preset wgperf-fix-rollback.service", "deb-systemd-helper"},
		{"rpm/post", "2", "", "preset"}, // an upgrade keeps the owner's choice
		{"rpm/preun", "0", "systemctl --no-reload disable wgperf-exporter.service wgperf-fix-rollback.service", ""},
		{"rpm/preun", "1", "", "wgperf-fix-rollback"},
		{"deb/prerm", "upgrade", "", "wgperf"},
		{"deb/postrm", "remove", "deb-systemd-helper mask wgperf-exporter.service wgperf-fix-rollback.service", ""},
		{"deb/postrm", "purge", "deb-systemd-helper purge wgperf-exporter.service wgperf-fix-rollback.service", ""},
	} {
		log := runScript(t, tc.script, strings.Fields(tc.arg)...)
		if !strings.Contains(log, tc.want) || (tc.not != "" && strings.Contains(log, tc.not)) {
			t.Errorf("%s %s called:\n%s\nwant %q, not %q", tc.script, tc.arg, log, tc.want, tc.not)
		}
	}
}

// runScript runs a maintainer script with systemctl and deb-systemd-helper
// stubs first in PATH, and returns their calls, one a line.
func runScript(t *testing.T, script string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	for _, tool := range []string{"systemctl", "deb-systemd-helper", "deb-systemd-invoke"} {
		stub := "#!/bin/sh\necho \"" + tool + " $*\" >> \"$CALLS\"\n"
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", append([]string{filepath.Join("scripts", script)}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":/usr/sbin:/usr/bin:/sbin:/bin", "CALLS="+log)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, out)
	}
	b, _ := os.ReadFile(log)
	return string(b)
}
