package check

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
)

// modulePath is the module whose packages Source.Package names, relative to it.
const modulePath = "github.com/wgperf/wgperf"

// catalogPackage is where the finding ID constants are declared.
const catalogPackage = "internal/catalog"

// checkPackage is this package as Source.Package names it: the maker of
// every finding of a check or cross-host check.
const checkPackage = "internal/check"

// declaredMakers are the packages an entry declares make its findings: this
// one for its check or cross-host check, and each probe's Package.
func declaredMakers(e Entry) []string {
	var out []string
	if e.Check != nil || e.Cross != nil {
		out = append(out, checkPackage)
	}
	for _, p := range e.Probes {
		if !slices.Contains(out, p.Package) {
			out = append(out, p.Package)
		}
	}
	return out
}

// TestProducers holds the catalog's declarations of who makes a finding to
// the code: every finding.Finding the module's code builds with a catalog
// ID is built in a package its entry declares, and every package an entry
// declares still builds one. When it came, five makers were declared
// nowhere: the bench's buffer, backlog and asymmetry findings, icmp-burst's
// and doctor's own (the same small limit on the other end).
func TestProducers(t *testing.T) {
	root := filepath.Join("..", "..")
	made := findingsMade(t, root, idConstants(t, filepath.Join(root, catalogPackage)))
	for _, m := range made {
		e, ok := Lookup(m.id)
		if !ok {
			t.Errorf("%s: makes %s, which is not in the catalog", m.pos, m.id)
			continue
		}
		if !slices.Contains(declaredMakers(e), m.pkg) {
			t.Errorf("%s: makes %s, which its catalog entry does not say %s makes: declare it (a Source with Package %q)", m.pos, m.id, m.pkg, m.pkg)
		}
	}
	for _, e := range Catalog {
		for _, pkg := range declaredMakers(e) {
			if pkg == "" {
				t.Errorf("%s: a probe source without the Package that makes its findings", e.ID)
				continue
			}
			if !slices.ContainsFunc(made, func(m producedAt) bool { return m.id == e.ID && m.pkg == pkg }) {
				t.Errorf("%s: its entry says %s makes it, but no finding.Finding with its ID is built there (a stale declaration)", e.ID, pkg)
			}
		}
	}
}

// producedAt is one place the code builds a finding with a catalog ID.
type producedAt struct {
	id  finding.ID
	pkg string // the package's directory, relative to the module
	pos string // file:line, relative to the module
}

// idConstants reads the ID constants of package catalog (in dir) from
// its source: name -> ID.
func idConstants(t *testing.T, dir string) map[string]finding.ID {
	t.Helper()
	out := map[string]finding.ID{}
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
						out[name.Name] = finding.ID(id)
					}
				}
			}
		}
	}
	if len(out) != len(Catalog) {
		t.Fatalf("read %d finding ID constants from %s, want one per catalog entry (%d)", len(out), dir, len(Catalog))
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

// findingsMade parses every non-test .go file of the module (both builds')
// and returns each finding.Finding literal's ID and place. A literal whose
// ID is no catalog constant (catalog.X, or X in package catalog) fails the
// test: which finding it makes cannot be read.
func findingsMade(t *testing.T, root string, ids map[string]finding.ID) []producedAt {
	t.Helper()
	var out []producedAt
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fm := fileMaker{pkg: path.Dir(rel), file: rel, fset: fset, ids: ids,
			finding: importName(f, modulePath+"/internal/finding"), catalog: importName(f, modulePath+"/"+catalogPackage)}
		made, problems := fm.scan(f)
		out = append(out, made...)
		for _, p := range problems {
			t.Error(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// importName is the name a file refers to an import path by, "" when it
// does not import it.
func importName(f *ast.File, importPath string) string {
	for _, s := range f.Imports {
		if p, _ := strconv.Unquote(s.Path.Value); p == importPath {
			if s.Name != nil {
				return s.Name.Name
			}
			return path.Base(p)
		}
	}
	return ""
}

// fileMaker reads one file's finding literals.
type fileMaker struct {
	pkg, file        string
	fset             *token.FileSet
	ids              map[string]finding.ID
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
func (fm fileMaker) catalogID(x ast.Expr) (finding.ID, bool) {
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
		ids:     idConstants(t, filepath.Join("..", "catalog")),
		finding: importName(f, modulePath+"/internal/finding"), catalog: importName(f, modulePath+"/"+catalogPackage)}
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
