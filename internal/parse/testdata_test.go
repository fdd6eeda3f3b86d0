package parse

import (
	"os"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// The recorded outputs of real tools, in testdata/collect at the module root.
func testdata(parts ...string) string {
	return testutil.Testdata(append([]string{"collect"}, parts...)...)
}
func openTestdata(t testing.TB, parts ...string) *os.File {
	return testutil.OpenTestdata(t, append([]string{"collect"}, parts...)...)
}
func readTestdata(t testing.TB, parts ...string) []byte {
	return testutil.ReadTestdata(t, append([]string{"collect"}, parts...)...)
}
