package catalog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// modulePath is the module whose packages the test reads.
const modulePath = "github.com/wgperf/wgperf"

// catalogPackage is this package, relative to the module.
const catalogPackage = "internal/catalog"

// TestRaises holds each package's declaration of the findings it builds (its
// package-level Raises, a literal of catalog constants) to its code: every
// finding.Finding the module's code builds is built in a package that
// declares its ID, every ID a package declares is built there, and every
// catalog ID is declared by a package. When the declarations were path
// strings in the catalog ("internal/probe/bench"), five makers had been
// declared nowhere: the bench's buffer, backlog and asymmetry findings,
// icmp-burst's and doctor's own (the same small limit on the other end).
func TestRaises(t *testing.T) {
	root := filepath.Join("..", "..")
	ids := idConstants(t, ".")
	made := findingsMade(t, root, ids)
	declared := raisesDeclared(t, root, ids)
	for _, m := range made {
		if !slices.Contains(declared[m.pkg], m.id) {
			t.Errorf("%s: builds %s, which %s does not declare: add it to the package's Raises (var Raises = []catalog.ID{...})", m.pos, m.id, m.pkg)
		}
	}
	raised := map[ID]bool{}
	for pkg, ids := range declared {
		for _, id := range ids {
			raised[id] = true
			if !slices.ContainsFunc(made, func(m producedAt) bool { return m.id == id && m.pkg == pkg }) {
				t.Errorf("%s: its Raises declares %s, but no finding.Finding with that ID is built there (a stale declaration)", pkg, id)
			}
		}
	}
	for _, e := range Entries {
		if !raised[e.ID] {
			t.Errorf("%s: no package declares it in its Raises: nothing builds it", e.ID)
		}
	}
}

// raisesDeclared reads each package's Raises declaration from its source:
// package directory (relative to root) -> IDs. An element that is not a
// catalog constant fails the test: the declaration is read, not run.
func raisesDeclared(t *testing.T, root string, ids map[string]ID) map[string][]ID {
	t.Helper()
	out := map[string][]ID{}
	testutil.GoFiles(t, root, func(rel string, fset *token.FileSet, f *ast.File) {
		fm := fileMaker{pkg: path.Dir(rel), file: rel, fset: fset, ids: ids, catalog: testutil.ImportName(f, modulePath+"/"+catalogPackage)}
		testutil.PackageVars(f, func(name *ast.Ident, value ast.Expr, v *ast.ValueSpec) {
			if name.Name != "Raises" {
				return
			}
			lit, ok := value.(*ast.CompositeLit)
			if !ok {
				t.Errorf("%s: Raises is not a literal of catalog constants", fm.pos(v))
				return
			}
			for _, x := range lit.Elts {
				id, ok := fm.catalogID(x)
				if !ok {
					t.Errorf("%s: an element of Raises that is not a catalog constant (catalog.X)", fm.pos(x))
					continue
				}
				out[fm.pkg] = append(out[fm.pkg], id)
			}
		})
	})
	return out
}

// producedAt is one place the code builds a finding with a catalog ID.
type producedAt struct {
	id  ID
	pkg string // the package's directory, relative to the module
	pos string // file:line, relative to the module
}

// idConstants reads the ID constants of package catalog (in dir) from
// its source: name -> ID.
func idConstants(t *testing.T, dir string) map[string]ID {
	t.Helper()
	out := map[string]ID{}
	for _, f := range parseDir(t, dir) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "ID" {
					continue
				}
				for i, name := range v.Names {
					if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						id, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						out[name.Name] = ID(id)
					}
				}
			}
		}
	}
	if len(out) != len(Entries) {
		t.Fatalf("read %d finding ID constants from %s, want one per catalog entry (%d)", len(out), dir, len(Entries))
	}
	return out
}

func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// findingsMade returns each finding.Finding literal of the module's code
// with its ID and place. A literal whose ID is no catalog constant
// (catalog.X, or X in package catalog) fails the test: which finding it
// makes cannot be read.
func findingsMade(t *testing.T, root string, ids map[string]ID) []producedAt {
	t.Helper()
	var out []producedAt
	testutil.GoFiles(t, root, func(rel string, fset *token.FileSet, f *ast.File) {
		fm := fileMaker{pkg: path.Dir(rel), file: rel, fset: fset, ids: ids,
			finding: testutil.ImportName(f, modulePath+"/internal/finding"), catalog: testutil.ImportName(f, modulePath+"/"+catalogPackage)}
		made, problems := fm.scan(f)
		out = append(out, made...)
		for _, p := range problems {
			t.Error(p)
		}
	})
	return out
}

// fileMaker reads one file's finding literals.
type fileMaker struct {
	pkg, file        string
	fset             *token.FileSet
	ids              map[string]ID
	finding, catalog string // the file's names for the two packages
}

// scan returns the findings a file makes, and what it makes that cannot be
// read (a literal without a catalog constant for its ID).
func (fm fileMaker) scan(f *ast.File) (made []producedAt, problems []string) {
	read := func(lit *ast.CompositeLit) {
		m, problem := fm.literal(lit)
		switch {
		case problem != "":
			problems = append(problems, problem)
		case m.id != "":
			made = append(made, m)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if fm.isFinding(n.Type) {
				read(n)
			}
			fm.elided(n.Type, n, read)
		case *ast.AssignStmt:
			// f.ID = catalog.X makes a finding with that ID as surely as a literal.
			for i, lhs := range n.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "ID" && i < len(n.Rhs) {
					if id, ok := fm.catalogID(n.Rhs[i]); ok {
						made = append(made, producedAt{id: id, pkg: fm.pkg, pos: fm.pos(n)})
					}
				}
			}
		}
		return true
	})
	return made, problems
}

// literal is a finding.Finding literal's ID and place, or why it cannot
// be read; an empty literal (a zero value to return) makes none.
func (fm fileMaker) literal(lit *ast.CompositeLit) (producedAt, string) {
	if len(lit.Elts) == 0 {
		return producedAt{}, ""
	}
	for _, x := range lit.Elts {
		kv, ok := x.(*ast.KeyValueExpr)
		if key, isIdent := kv.Key.(*ast.Ident); !ok || !isIdent || key.Name != "ID" {
			continue
		}
		id, ok := fm.catalogID(kv.Value)
		if !ok {
			return producedAt{}, fm.pos(lit) + ": a finding.Finding whose ID is not a catalog constant (catalog.X): name the constant, so the catalog can say who makes it"
		}
		return producedAt{id: id, pkg: fm.pkg, pos: fm.pos(lit)}, ""
	}
	return producedAt{}, fm.pos(lit) + ": a finding.Finding with no ID: name its catalog constant in the literal"
}

// catalogID resolves catalog.X (X inside package catalog) to its ID.
func (fm fileMaker) catalogID(x ast.Expr) (ID, bool) {
	var name string
	switch x := x.(type) {
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && fm.catalog != "" && pkg.Name == fm.catalog {
			name = x.Sel.Name
		}
	case *ast.Ident:
		if fm.pkg == catalogPackage {
			name = x.Name
		}
	}
	id, ok := fm.ids[name]
	return id, ok
}

// isFinding reports the type finding.Finding (Finding in package finding).
func (fm fileMaker) isFinding(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && fm.finding != "" && pkg.Name == fm.finding && x.Sel.Name == "Finding"
	case *ast.Ident:
		return fm.pkg == "internal/finding" && x.Name == "Finding"
	case *ast.StarExpr:
		return fm.isFinding(x.X)
	}
	return false
}

// elided reads the findings among a literal's elements whose type is left
// out, []finding.Finding{{ID: ...}}, at any depth (map[string][]finding.Finding):
// typ is the literal's type, where it is written.
func (fm fileMaker) elided(typ ast.Expr, lit *ast.CompositeLit, read func(*ast.CompositeLit)) {
	var elem ast.Expr
	switch x := typ.(type) {
	case *ast.ArrayType:
		elem = x.Elt
	case *ast.MapType:
		elem = x.Value
	default:
		return
	}
	for _, x := range lit.Elts {
		if kv, ok := x.(*ast.KeyValueExpr); ok {
			x = kv.Value
		}
		if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
			x = u.X
		}
		inner, ok := x.(*ast.CompositeLit)
		if !ok || inner.Type != nil {
			continue // a literal with its type is read where ast.Inspect meets it
		}
		if fm.isFinding(elem) {
			read(inner)
		} else {
			fm.elided(elem, inner, read)
		}
	}
}

func (fm fileMaker) pos(n ast.Node) string {
	return fm.file + ":" + strconv.Itoa(fm.fset.Position(n.Pos()).Line)
}

// The forms a finding is built in, each read with its ID; an ID the
// catalog cannot name, and a literal with none, fail.
func TestFindingsMadeForms(t *testing.T) {
	const src = `package probe

import (
	c "github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
)

var (
	a = finding.Finding{ID: c.UDPRcvbufErrors}
	b = &finding.Finding{Severity: finding.Warning, ID: c.CPUSaturated}
	d = []finding.Finding{{ID: c.NetBacklogDrops}}
	e = []*finding.Finding{{ID: c.KernelDrops}}
	g = map[string][]finding.Finding{"x": {{ID: c.CPUSteal}}}
	zero = finding.Finding{}
)

func set(f *finding.Finding) { f.ID = c.WGUserspace }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "probe.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	fm := fileMaker{pkg: "internal/probe/x", file: "internal/probe/x/probe.go", fset: fset,
		ids:     idConstants(t, "."),
		finding: testutil.ImportName(f, modulePath+"/internal/finding"), catalog: testutil.ImportName(f, modulePath+"/"+catalogPackage)}
	var got []string
	made, problems := fm.scan(f)
	for _, m := range made {
		got = append(got, string(m.id)+"@"+m.pos)
	}
	if len(problems) > 0 {
		t.Errorf("problems: %q", problems)
	}
	want := []string{
		"udp.rcvbuf-errors@internal/probe/x/probe.go:9", "cpu.saturated@internal/probe/x/probe.go:10",
		"net.backlog-drops@internal/probe/x/probe.go:11", "kernel.drops@internal/probe/x/probe.go:12",
		"cpu.steal@internal/probe/x/probe.go:13", "wg.userspace@internal/probe/x/probe.go:17",
	}
	if !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}

	for _, bad := range []string{`finding.Finding{ID: id}`, `finding.Finding{ID: "udp.rcvbuf-errors"}`, `finding.Finding{Host: "a"}`} {
		f, err := parser.ParseFile(fset, "bad.go", `package probe; import "github.com/wgperf/wgperf/internal/finding"; var x = `+bad, 0)
		if err != nil {
			t.Fatal(err)
		}
		fm.finding, fm.catalog = "finding", ""
		if made, problems := fm.scan(f); len(made) != 0 || len(problems) != 1 {
			t.Errorf("%s: read %v, problems %q: want one problem", bad, made, problems)
		}
	}
}
