package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// Testdata is the path of a recorded file in the module's testdata folder
// (parts below it), from a test in any package.
func Testdata(parts ...string) string {
	return filepath.Join(append([]string{moduleRoot(), "testdata"}, parts...)...)
}

// OpenTestdata opens a recorded file (Testdata), closed when t ends.
func OpenTestdata(t testing.TB, parts ...string) *os.File {
	t.Helper()
	f, err := os.Open(Testdata(parts...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// ReadTestdata reads a recorded file (Testdata).
func ReadTestdata(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(Testdata(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// moduleRoot is the folder of go.mod above the test's working directory
// (go test runs a test in its package's folder).
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			panic("testutil: no go.mod above " + dir)
		}
	}
}
