package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ImportName is the name a file refers to an import path by, "" when it does
// not import it: the tests that read the module's own source (what each
// producer raises, which probe definitions are listed) find a package's
// identifiers through it.
func ImportName(f *ast.File, importPath string) string {
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

// GoFiles parses every .go file below root but the tests (both builds'
// files: build tags are not read), leaving out testdata, vendor and the
// folders go ignores (. and _), and calls fn with each one's path relative
// to root, slash-separated. A file that does not parse fails t.
func GoFiles(t testing.TB, root string, fn func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
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
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// PackageVars calls fn with each variable f declares at package level: its
// name, its value (nil where the declaration gives it none of its own:
// var x T, or var a, b = f()) and its declaration.
func PackageVars(f *ast.File, fn func(name *ast.Ident, value ast.Expr, spec *ast.ValueSpec)) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, name := range v.Names {
				var value ast.Expr
				if len(v.Values) == len(v.Names) {
					value = v.Values[i]
				}
				fn(name, value, v)
			}
		}
	}
}
