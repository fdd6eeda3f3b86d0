//go:build router

package exporter

import "testing"

// testServer serves s as this build's exporter does (the small server) and
// returns its base URL; it stops when the test ends.
func testServer(t testing.TB, s *Site) string { return startTiny(t, s) }
