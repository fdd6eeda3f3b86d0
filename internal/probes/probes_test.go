package probes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestListIsTheCatalogs: every probe a finding calls for is on the list, each
// entry once, with a help line, and each raises what its package declares.
func TestListIsTheCatalogs(t *testing.T) {
	seen := map[catalog.Probe]bool{}
	for _, e := range All {
		if seen[e.Name] {
			t.Errorf("%s listed twice", e.Name)
		}
		seen[e.Name] = true
		if e.Doc == "" {
			t.Errorf("%s: no help line", e.Name)
		}
		if len(e.Raises) == 0 {
			t.Errorf("%s: raises nothing: give it its package's Raises", e.Name)
		}
		if got, ok := Lookup(e.Name); !ok || got.Name != e.Name {
			t.Errorf("Lookup(%s) = %v, %v", e.Name, got, ok)
		}
	}
	for _, id := range catalog.IDs() {
		ent, _ := catalog.Lookup(id)
		if c := ent.Doctor.Calls; c != "" && !seen[c] {
			t.Errorf("%s calls for probe %q, which is not on the list", id, c)
		}
	}
	if _, ok := Lookup("no-such-probe"); ok {
		t.Error("Lookup found a probe that is not on the list")
	}
}

func TestRaises(t *testing.T) {
	e, _ := Lookup(catalog.ProbeMTU)
	if !slices.Contains(e.Raises, catalog.MTUPMTUDBlackhole) {
		t.Errorf("mtu raises %v, want %s among them", e.Raises, catalog.MTUPMTUDBlackhole)
	}
}

// TestEveryDefIsListed: a probe.Def a probe package exports and All does not
// list would be a probe doctor never plans, runs or documents. It reads the
// definitions from the probe packages' source and All's elements from
// probes.go.
func TestEveryDefIsListed(t *testing.T) {
	const module = "github.com/wgperf/wgperf"
	exported := map[string]bool{} // import path + "." + var
	testutil.GoFiles(t, filepath.Join("..", "probe"), func(rel string, _ *token.FileSet, f *ast.File) {
		pkg := path.Dir(rel) // below internal/probe; "." is package probe itself
		probeName := testutil.ImportName(f, module+"/internal/probe")
		testutil.PackageVars(f, func(name *ast.Ident, value ast.Expr, _ *ast.ValueSpec) {
			if pkg != "." && isDef(value, probeName) && name.IsExported() {
				exported[module+"/internal/probe/"+pkg+"."+name.Name] = true
			}
		})
	})
	if len(exported) == 0 {
		t.Fatal("no probe.Def found in internal/probe/*")
	}
	f, err := parser.ParseFile(token.NewFileSet(), "probes.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.ValueSpec)
		if !ok || len(v.Names) != 1 || v.Names[0].Name != "All" {
			return true
		}
		for _, x := range v.Values[0].(*ast.CompositeLit).Elts {
			sel, ok := x.(*ast.SelectorExpr)
			if !ok {
				t.Errorf("All lists %T: list each package's definition (pkg.Def)", x)
				continue
			}
			listed[importPath(f, sel.X.(*ast.Ident).Name)+"."+sel.Sel.Name] = true
		}
		return false
	})
	for def := range exported {
		if !listed[def] {
			t.Errorf("%s is a probe definition All does not list: add it to All (probes.go)", def)
		}
	}
	if len(listed) != len(All) {
		t.Errorf("read %d definitions in All's source, All has %d", len(listed), len(All))
	}
}

// isDef reports a probe.Def literal.
func isDef(x ast.Expr, probeName string) bool {
	lit, ok := x.(*ast.CompositeLit)
	if !ok {
		return false
	}
	sel, ok := lit.Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && probeName != "" && pkg.Name == probeName && sel.Sel.Name == "Def"
}

// importPath is the path a file imports under name.
func importPath(f *ast.File, name string) string {
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		if (s.Name != nil && s.Name.Name == name) || (s.Name == nil && filepath.Base(p) == name) {
			return p
		}
	}
	return name
}
