package doctor

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A verdict whose finding lists a hub's 200 down peers prints the first
// finding.TextEvidence items and counts the rest; JSON keeps them all.
func TestVerdictEvidenceIsCappedInText(t *testing.T) {
	f := finding.Finding{ID: catalog.WGHandshakeStale, Severity: finding.Critical, Host: targettest.Spec("ssh:root@hub"), Interface: "wg0",
		Title: "200 peers of wg0 are down"}
	for i := range 200 {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "wg show wg0 dump", Key: fmt.Sprintf("peer %d", i), Value: "never"})
	}
	r := &Report{Client: targettest.Spec("ssh:root@hub"), Status: StatusSlow, Causes: []Cause{{Finding: f, Gain: "the peers' tunnels"}}}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if n := strings.Count(text, "wg show wg0 dump: peer "); n != finding.TextEvidence {
		t.Errorf("the verdict prints %d evidence items, want %d:\n%s", n, finding.TextEvidence, text)
	}
	if !strings.Contains(text, "- … and 190 more (--json lists every one)") {
		t.Errorf("the verdict does not count the rest:\n%s", text)
	}
}
