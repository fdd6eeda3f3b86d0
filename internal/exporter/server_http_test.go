//go:build !router

package exporter

import (
	"net/http/httptest"
	"testing"
)

// testServer serves s as this build's exporter does (net/http) and returns
// its base URL; it stops when the test ends.
func testServer(t testing.TB, s *Site) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}
