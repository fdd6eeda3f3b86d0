package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
)

// docs/coverage.md is what Coverage writes: make docs regenerates it.
func TestCoverageDocCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", CoverageFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(b), Coverage()); diff != "" {
		t.Errorf("%s is not current: run make docs (-committed +generated):\n%s", CoverageFile, diff)
	}
}

// Every case has its techniques, in the catalog's order, and every finding
// ID a cell names exists.
func TestCoverageNamesExist(t *testing.T) {
	var cases []string
	for _, ct := range Techniques {
		cases = append(cases, ct.Case)
		if len(ct.Techniques) == 0 {
			t.Errorf("%s: no techniques", ct.Case)
		}
	}
	if diff := cmp.Diff(catalog.Cases, cases); diff != "" {
		t.Errorf("Techniques' cases are not catalog.Cases (-want +got):\n%s", diff)
	}
	for _, u := range coverageUnknown() {
		t.Error(u)
	}
}

// The page names each case's scenarios and findings from the catalogs, and
// its counts add up: a scenario added to the catalog shows up.
func TestCoverageFromTheCatalogs(t *testing.T) {
	doc := Coverage()
	for _, sc := range Catalog {
		if sc.Case != "" && !strings.Contains(doc, "`"+sc.Name+"`") {
			t.Errorf("scenario %s (%s) is not on the page", sc.Name, sc.Case)
		}
	}
	for _, e := range check.Catalog {
		if len(e.Cases) > 0 && !strings.Contains(doc, "findings/"+string(e.ID)+".md") {
			t.Errorf("finding %s is not on the page", e.ID)
		}
	}
	saved := Techniques
	defer func() { Techniques = saved }()
	Techniques = []CaseTechniques{{Case: catalog.CaseECMP, Techniques: []Technique{{"a", Done, "b"}, {"c", Missing, "`throughput.nothing`"}}}}
	if doc := Coverage(); !strings.Contains(doc, "| **all five (2 techniques)** | **1** | **0** | **1** | **0** |") || !strings.Contains(doc, "- c ("+catalog.CaseECMP+"): `throughput.nothing`") {
		t.Errorf("counts or the missing list:\n%s", doc)
	}
	if u := coverageUnknown(); len(u) != 1 || !strings.Contains(u[0], "throughput.nothing") {
		t.Errorf("an unknown ID not reported: %v", u)
	}
}
