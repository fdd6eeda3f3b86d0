package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// SeedDir adds every file in dir (recorded tool output) to f's corpus.
func SeedDir(f *testing.F, dir string) {
	f.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}
