package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/check"
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
	committed := filepath.Join("..", "..", findingDocsDir)
	want, got := dirFiles(t, committed), dirFiles(t, tmp)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s is not current: run make docs (-committed +generated):\n%s", findingDocsDir, diff)
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

// TestFindingPages: one page per catalog ID with every part the brief of a
// finding needs, and an index linking them all; no page cites a seed number.
func TestFindingPages(t *testing.T) {
	pages := findingDocs()
	if len(pages) != len(check.Catalog)+1 {
		t.Errorf("%d pages for %d IDs and the index", len(pages), len(check.Catalog))
	}
	seed := regexp.MustCompile(`(?i)\bseeds?\s+0\d\d`)
	for name, page := range pages {
		if m := seed.FindString(string(page)); m != "" {
			t.Errorf("%s says %q", name, m)
		}
	}
	for _, id := range catalogIDs() {
		page := string(pages[id+".md"])
		for _, want := range []string{"# `" + id + "`", "## Why it matters", "## What fires it", "## Where it comes from", "## The fix", "```sh\n", "wgperf explain " + id} {
			if !strings.Contains(page, want) {
				t.Errorf("%s.md lacks %q", id, want)
			}
		}
		if !strings.Contains(string(pages["README.md"]), "]("+id+".md)") {
			t.Errorf("the index does not link %s.md", id)
		}
	}
	// A doc's list stays a list and its literal text stays literal.
	icmp := string(pages["icmp.ratelimit-drops.md"])
	if strings.Count(icmp, "\n- ") != 2 || !strings.Contains(icmp, "\n\nCounted drops above 0") {
		t.Errorf("icmp.ratelimit-drops.md: the doc's list is not a Markdown list:\n%s", icmp)
	}
	if !strings.Contains(string(pages["mtu.tunnel-too-large.md"]), `ip route get \<endpoint\>`) {
		t.Error("mtu.tunnel-too-large.md: <endpoint> would read as an HTML tag")
	}
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	slices.Sort(names)
	if names[0] != "README.md" {
		t.Errorf("pages %v", names)
	}
}
