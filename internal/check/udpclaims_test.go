package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
)

// The multi-WAN router's 5G epilogue measured raw UDP over 5G at 300 Mbit/s
// with 0.18% loss and ruled out port and throttling while WireGuard ran at
// 1.7 Mbit/s: no policer. path.udp-policed must not claim that case (it did:
// its case was the multi-WAN router and its doc the 175× collapse); a
// collapse no UDP run reproduces is WireGuard's own, and that finding is the
// one that names the case.
func TestFiveGCollapseIsNotClaimedAsPolicing(t *testing.T) {
	for _, tc := range []struct {
		id    finding.ID
		claim bool
	}{{catalog.PathUDPPoliced, false}, {catalog.PathPortThrottled, false}, {catalog.WGSpecificCollapse, true}} {
		e, ok := Lookup(tc.id)
		if !ok {
			t.Fatalf("%s: not in the catalog", tc.id)
		}
		if got := slices.Contains(e.Cases, catalog.CaseMultiWAN); got != tc.claim {
			t.Errorf("%s: claims the multi-WAN case: %v, want %v", tc.id, got, tc.claim)
		}
		if tc.claim {
			continue
		}
		var docs []string
		if e.Check != nil {
			docs = append(docs, e.Check.Doc)
		}
		if e.Cross != nil {
			docs = append(docs, e.Cross.Doc)
		}
		for _, src := range e.Probes {
			docs = append(docs, src.Doc)
		}
		for _, doc := range docs {
			if strings.Contains(doc, "175") || strings.Contains(strings.ToLower(doc), "mobile uplink") {
				t.Errorf("%s: its doc tells the 5G collapse as its own: %q", tc.id, doc)
			}
		}
	}
}
