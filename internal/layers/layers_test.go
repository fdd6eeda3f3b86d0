// Package layers holds wgperf's import tiers: TestImportTiers reads the
// packages' imports with "go list" (the full build and the router build) and
// fails on an import that goes up a tier. The README's Layout picture is this
// table. TestRecipesAreHeld (recipes_test.go) holds CONTRIBUTING.md's recipes
// each to the tests it names.
package layers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/wgperf/wgperf/"

// tiers are wgperf's packages, top down. A package imports only packages of
// its own tier or below (Go refuses a cycle inside a tier); a package in no
// tier fails the test until it is given one.
var tiers = []struct {
	name     string
	packages []string // below the module; "x/..." is x and every package under it
}{
	{"commands", []string{"cmd/wgperf", "internal/cli", "packaging", "packaging/...", "scripts/..."}},
	{"lab run", []string{"internal/scenario", "internal/lab/labtest"}},
	{"doctor", []string{"internal/doctor"}},
	{"report", []string{"internal/verify", "internal/report"}},
	{"use cases", []string{"internal/diagnose", "internal/fix", "internal/exporter"}},
	{"probe registry", []string{"internal/probes"}},
	{"probes and sources", []string{"internal/probe", "internal/probe/...", "internal/collect", "internal/fleet", "internal/discover", "internal/lab", "internal/lab/sizing", "internal/lab/guest"}},
	{"leaves", []string{"internal/findingdoc", "internal/check", "internal/catalog", "internal/remedy", "internal/finding", "internal/facts", "internal/parse", "internal/firewall",
		"internal/icmplimit", "internal/document", "internal/outfile", "internal/target", "internal/target/targettest", "internal/shell", "internal/openwrt", "internal/clock", "internal/buildinfo", "internal/testutil", "internal/layers",
		"internal/report/svgchart"}},
}

// tierOf is the index of pkg's tier (0 is the top), -1 for none.
func tierOf(pkg string) int {
	for i, t := range tiers {
		for _, p := range t.packages {
			if p == pkg || strings.HasSuffix(p, "/...") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "...")) {
				return i
			}
		}
	}
	return -1
}

type listed struct {
	ImportPath string
	Imports    []string
}

// list is "go list -json" of every package with the given build tags.
func list(t *testing.T, tags string) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", tags, "-json", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestImportTiers: no package imports one of a higher tier, in the full
// build or the router build (-tags router).
func TestImportTiers(t *testing.T) {
	for _, tags := range []string{"", "router"} {
		pkgs := list(t, tags)
		if len(pkgs) < 20 {
			t.Fatalf("go list -tags %q found %d packages", tags, len(pkgs))
		}
		for _, p := range pkgs {
			from := strings.TrimPrefix(p.ImportPath, module)
			ti := tierOf(from)
			if ti < 0 {
				t.Errorf("%s is in no tier: add it to the table in internal/layers (and the README's Layout)", from)
				continue
			}
			for _, imp := range p.Imports {
				to, ok := strings.CutPrefix(imp, module)
				if !ok {
					continue
				}
				if tj := tierOf(to); tj < ti {
					t.Errorf("%s (%s) imports %s (%s), a tier above it%s", from, tiers[ti].name, to, tierName(tj), tagNote(tags))
				}
			}
		}
	}
}

func tierName(i int) string {
	if i < 0 {
		return "no tier"
	}
	return tiers[i].name
}

func tagNote(tags string) string {
	if tags == "" {
		return ""
	}
	return fmt.Sprintf(" (-tags %s)", tags)
}

// TestTiersNameRealPackages: every package in the table exists.
func TestTiersNameRealPackages(t *testing.T) {
	have := map[string]bool{}
	for _, p := range list(t, "") {
		have[strings.TrimPrefix(p.ImportPath, module)] = true
	}
	for _, tier := range tiers {
		for _, p := range tier.packages {
			found := have[p]
			for q := range have {
				if strings.HasSuffix(p, "/...") && path.Dir(q) == strings.TrimSuffix(p, "/...") {
					found = true
				}
			}
			if !found {
				t.Errorf("tier %s names %s, which is not a package", tier.name, p)
			}
		}
	}
}
