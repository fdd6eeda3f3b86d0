package catalog

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestIsALeaf: the catalog imports the standard library and the finding
// type only, so that any package may import it for an ID without pulling in
// the checks, the remedies or a probe.
func TestIsALeaf(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			imp, _ := strconv.Unquote(s.Path.Value)
			if strings.Contains(strings.Split(imp, "/")[0], ".") && imp != "github.com/wgperf/wgperf/internal/finding" {
				t.Errorf("%s imports %s: the catalog imports only the standard library and internal/finding", p, imp)
			}
		}
	}
}

// Every entry is found by its ID, once, and says what it is.
func TestEntries(t *testing.T) {
	ids := IDs()
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatalf("IDs not sorted or not unique: %q", ids)
	}
	for _, e := range Entries {
		if got, ok := Lookup(e.ID); !ok || got.ID != e.ID {
			t.Errorf("Lookup(%s) = %v, %v", e.ID, got.ID, ok)
		}
		area, name, ok := strings.Cut(string(e.ID), ".")
		if !ok || area == "" || name == "" {
			t.Errorf("%s: an ID is area.name", e.ID)
		}
		if e.Title == "" || e.Why == "" || len(e.Severities) == 0 || e.Doctor.Role == 0 {
			t.Errorf("%s: an entry has its title, why, severities and doctor's role", e.ID)
		}
		for _, c := range e.Cases {
			if !slices.Contains(Cases, c) {
				t.Errorf("%s: case %q is not one of Cases", e.ID, c)
			}
		}
	}
	if Has("mtu.no-such") {
		t.Error("Has(mtu.no-such)")
	}
}
