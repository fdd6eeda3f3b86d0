package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

var generatedAt = regexp.MustCompile(`"generated_at": "[^"]*"`)

// golden runs wgperf with args and compares its standard output with
// testdata/name (the time a document was generated left out).
func goldenRun(t *testing.T, name string, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != exitOK {
		t.Fatalf("wgperf %v: exit %d: %s", args, code, errOut.String())
	}
	got := generatedAt.ReplaceAll(out.Bytes(), []byte(`"generated_at": "TIME"`))
	testutil.Golden(t, filepath.Join("testdata", name), got)
}

// TestCatalogGolden holds what "wgperf checks" and "wgperf explain" print for
// the whole catalog, as text and JSON.
func TestCatalogGolden(t *testing.T) {
	goldenRun(t, "checks.txt", "checks")
	goldenRun(t, "checks.json", "checks", "--json")
	for _, id := range catalogIDs() {
		goldenRun(t, filepath.Join("explain", id+".txt"), "explain", id)
		goldenRun(t, filepath.Join("explain", id+".json"), "explain", id, "--json")
	}
}
