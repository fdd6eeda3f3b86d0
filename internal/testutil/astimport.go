package testutil

import (
	"go/ast"
	"path"
	"strconv"
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
