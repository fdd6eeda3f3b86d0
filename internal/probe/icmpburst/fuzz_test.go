package icmpburst

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParsePingStats: the ping summary comes from the probed host; counts
// are never negative and never more received than sent.
func FuzzParsePingStats(f *testing.F) {
	for _, name := range []string{"oneshot.txt", "persistent.txt"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "icmpburst", name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sent, received, err := ParsePingStats(bytes.NewReader(b))
		if err == nil && (sent < 0 || received < 0) {
			t.Fatalf("ParsePingStats(%q) = %d, %d", b, sent, received)
		}
		_ = ParseOneShot(bytes.NewReader(b), []string{"8.8.8.8", "1.1.1.1"}, 10)
	})
}
