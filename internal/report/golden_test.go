package report

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/testutil"
)

// TestHTMLGolden holds every report page, byte for byte, on the recorded
// documents: what report --from reads, and the pages fix --verify and
// shape-sweep write.
func TestHTMLGolden(t *testing.T) {
	docs := map[string]Document{}
	for _, name := range []string{"bench", "bench-clients", "mtu", "icmp-burst"} {
		docs[name] = *readFixture(t, name+".json")
	}
	docs["labrun"] = *labRunDoc(t)
	diag, err := ReadDocument(bytes.NewReader(diagnosisJSON(t)))
	if err != nil {
		t.Fatal(err)
	}
	docs["diagnose"] = *diag
	docs["fix"] = fixDoc(t)
	docs["shape-sweep"] = sweepDoc(t)
	for name, doc := range docs {
		doc.Generated = time.Date(2026, 4, 7, 19, 56, 0, 0, time.UTC)
		testutil.Golden(t, filepath.Join("testdata", name+".html"), []byte(render(t, doc)))
	}
}
