package collect

import (
	"testing"
)

func FuzzParseBatch(f *testing.F) {
	f.Add([]byte(batchMark + " out a\nx\n" + batchMark + " err a 0\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _ = parseBatch(string(b)) })
}
