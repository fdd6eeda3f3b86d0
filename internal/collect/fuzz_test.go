package collect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

func FuzzParseUCI(f *testing.F) {
	addCorpus(f, "openwrt/uci-show-*")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseUCI(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k, v := range m {
			if !uciKeptKey(k, v) || strings.HasSuffix(k, ".private_key") || strings.HasSuffix(k, ".preshared_key") {
				t.Errorf("%s=%q kept: not on the allow-list", k, v)
			}
		}
	})
}

func FuzzParseMwan3Events(f *testing.F) {
	addCorpus(f, "openwrt/logread-*")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseMwan3Events(bytes.NewReader(b)) })
}

func FuzzParseBatch(f *testing.F) {
	f.Add([]byte(batchMark + " out a\nx\n" + batchMark + " err a 0\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _ = parseBatch(string(b)) })
}
