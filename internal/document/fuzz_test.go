package document

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/testutil"
)

// FuzzReadSnapshot reads any JSON as a snapshot and runs every check on what
// it accepts: a snapshot from someone else must not crash diagnose.
func FuzzReadSnapshot(f *testing.F) {
	testutil.SeedDir(f, testutil.Testdata("snapshots"))
	f.Add([]byte(`{"schema_version": 1, "host": "local", "links": [{"name": "wg0", "mtu": -1}]}`))
	f.Add([]byte(`{"schema_version": 1, "host": "ssh:-oProxyCommand=x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadSnapshot(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if s.Host.String() == "" {
			t.Fatal("snapshot without host accepted")
		}
		res := check.Run([]*facts.Snapshot{s}, check.Options{})
		for _, x := range res.Findings {
			if !utf8.ValidString(string(x.ID)) {
				t.Fatalf("finding ID %q", x.ID)
			}
		}
	})
}
