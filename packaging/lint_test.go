package packaging

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkLintian runs Debian's package checker on the .deb: no error and no
// warning. The one error it would raise, statically-linked-binary, is
// overridden in the package itself (.goreleaser.yaml, lintian_overrides,
// where the reason is written), and so is its one warning,
// initial-upload-closes-no-bugs. Its informational tags are logged; they are
// known and left as they are: the systemd units have no init.d script
// (wgperf's exporter and boot hook are systemd units; sysvinit hosts run
// wgperf by hand), and spelling hints in the binary's strings come from its
// dependencies.
func checkLintian(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("lintian"); err != nil {
		t.Log("lintian is not installed (make deps-test): the .deb is not checked against Debian policy")
		return
	}
	out, err := exec.Command("lintian", "--tag-display-limit", "0", "--display-info", "--fail-on", "error,warning", path).CombinedOutput()
	if err != nil || regexp.MustCompile(`(?m)^[EW]: `).Match(out) {
		t.Errorf("lintian %s: %v\n%s", path, err, out)
		return
	}
	t.Logf("lintian %s: no error or warning; it says:\n%s", path, out)
}

// checkRpmlint runs rpmlint on the .rpm with packaging/rpmlint.toml (Fedora's
// conventions, each filter explained there): no error and no warning. The
// changelog's version is written with chglog's "-" before a pre-release
// where rpm writes "~" (1.3.0-rc.1-1 for 1.3.0~rc.1-1): for a pre-release,
// as every test snapshot is, that one warning is let through.
func checkRpmlint(t *testing.T, path, version string) {
	t.Helper()
	if _, err := exec.LookPath("rpmlint"); err != nil {
		t.Log("rpmlint is not installed (make deps-test): the .rpm is not checked")
		return
	}
	out, _ := exec.Command("rpmlint", "-c", filepath.Join(repoRoot(t), "packaging", "rpmlint.toml"), path).CombinedOutput()
	var bad []string
	for _, line := range strings.Split(string(out), "\n") {
		if !regexp.MustCompile(`: [EW]: `).MatchString(line) {
			continue
		}
		if strings.Contains(version, "-") && strings.Contains(line, " W: incoherent-version-in-changelog ") {
			continue
		}
		bad = append(bad, line)
	}
	if len(bad) > 0 {
		t.Errorf("rpmlint %s:\n%s\n\nall it said:\n%s", path, strings.Join(bad, "\n"), out)
		return
	}
	t.Logf("rpmlint %s: no error or warning; it says:\n%s", path, out)
}
