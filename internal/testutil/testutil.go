// Package testutil holds the few helpers tests share: gates for tests that need
// root and real tools, and golden files with one -update flag. Outside CI such
// tests skip with a message; in CI (CI=true) a missing tool is a failure,
// because .ci/run installs them all. WGPERF_UNIT=1 ("make unit") skips every
// root test, also as root: the unit tests then run in under a minute beside
// whatever labs the machine runs.
package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under .ci/run.
func InCI() bool { return os.Getenv("CI") == "true" }

// UnitOnly reports whether only the tests that need no root run (make unit).
func UnitOnly() bool { return os.Getenv("WGPERF_UNIT") == "1" }

// RequireRoot skips t unless the test runs as root (namespaces, nft, tc need
// it) and root tests were not left out (WGPERF_UNIT=1).
func RequireRoot(t testing.TB) {
	t.Helper()
	if UnitOnly() {
		t.Skip("a root test: WGPERF_UNIT=1 runs the unit tests only")
	}
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
