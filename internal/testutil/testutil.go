// Package testutil holds the few helpers tests share: gates for tests that need
// root and real tools. Outside CI such tests skip with a message; in CI (CI=true)
// a missing tool is a failure, because .ci/run installs them all.
package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under .ci/run.
func InCI() bool { return os.Getenv("CI") == "true" }

// RequireRoot skips t unless the test runs as root (namespaces, nft, tc need it).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if InCI() {
			t.Fatal("CI runs as root, but this test is not root")
		}
		t.Skip("needs root: network namespaces, nftables and tc (run the tests with sudo, or in CI)")
	}
}

// RequireTools skips t (fails it in CI) when any program is missing from PATH.
func RequireTools(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if InCI() {
				t.Fatalf("%s is not installed; .ci/run should have installed it", n)
			}
			t.Skipf("needs %s (make deps installs it)", n)
		}
	}
}
