package collect

import (
	"os"
	"path/filepath"
	"testing"
)

// addCorpus seeds a fuzz test with every recorded file matching the globs.
func addCorpus(f *testing.F, globs ...string) {
	f.Helper()
	for _, g := range globs {
		files, err := filepath.Glob(testdata(g))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

func FuzzParseBatch(f *testing.F) {
	f.Add([]byte(batchMark + " out a\nx\n" + batchMark + " err a 0\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _ = parseBatch(string(b)) })
}
