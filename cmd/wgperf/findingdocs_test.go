package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/findingdoc"
)

// TestFindingDocsCurrent regenerates docs/findings into a temporary directory
// the way "make docs" does and compares it with the committed pages: a
// catalog change must come with its pages.
func TestFindingDocsCurrent(t *testing.T) {
	tmp := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"checks", "--markdown", tmp}, &out, &errOut); code != exitOK {
		t.Fatalf("checks --markdown: exit %d: %s", code, errOut.String())
	}
	committed := filepath.Join("..", "..", findingdoc.DocsDir)
	want, got := dirFiles(t, committed), dirFiles(t, tmp)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s is not current: run make docs (-committed +generated):\n%s", findingdoc.DocsDir, diff)
	}
}

// dirFiles reads every file of dir by name.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run make docs)", err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
