package discover

import (
	"bytes"
	"os"
	"testing"
)

// FuzzParseIPAddr: "ip -j addr" comes from the far end; it parses or fails,
// never panics.
func FuzzParseIPAddr(f *testing.F) {
	for _, node := range []string{"a", "b"} {
		if b, err := os.ReadFile(testdata("discover", "ip-addr-"+node+".json")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseIPAddr(bytes.NewReader(b))
	})
}
