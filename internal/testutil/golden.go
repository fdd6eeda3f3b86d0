package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the one flag that rewrites what tests compare with: golden
// outputs, and with root, the fixtures a test records from a real lab.
var update = flag.Bool("update", false, "rewrite golden files (and, as root, re-record lab fixtures) instead of comparing with them")

// Update reports whether the test run was asked to rewrite its golden files
// and recorded fixtures (go test -update).
func Update() bool { return *update }

// Golden compares got with the file at path, or with -update writes got
// there (creating its folder). A difference is reported as "(-want +got)".
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}
