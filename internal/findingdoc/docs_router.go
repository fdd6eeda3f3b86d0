//go:build router

package findingdoc

import "errors"

// WriteDocs refuses in the router build, which leaves the docs pages out
// (docs_pages.go): "make docs" writes them with the full build.
func WriteDocs(string) error {
	return errors.New("the docs pages (make docs) are not in the router build: use the full build")
}
