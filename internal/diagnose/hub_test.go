package diagnose

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// hubExtraPeers is the lab hub's two spokes and this many road warriors, offline.
const hubExtraPeers = 998

// diagnoseHub is "wgperf diagnose" of a hub with 1,000 peers, as the command
// runs it: collect the host (its batches in a real shell whose wg prints the
// hub's dump, testutil.HubTools), run every check, render the text.
func diagnoseHub(t testing.TB, h *targettest.Host) (Diagnosis, []byte) {
	t.Helper()
	s, err := collect.Collect(context.Background(), h, collect.Options{Now: func() time.Time { return testutil.HubRecorded }})
	if err != nil {
		t.Fatal(err)
	}
	snaps := []*facts.Snapshot{s}
	d := NewDiagnosis(snaps, check.Run(snaps, check.Options{}))
	var text bytes.Buffer
	if err := WriteText(&text, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return d, text.Bytes()
}

// BenchmarkDiagnoseHub1000Peers is diagnose on a hub with 1,000 peers, 998 of
// them offline (issue 49: 1.15 s and 36 MB on a lab hub before stale peers
// were one finding). It reports the findings and the text's size beside time
// and memory (run with -benchmem).
func BenchmarkDiagnoseHub1000Peers(b *testing.B) {
	h := targettest.InShell(b, "ssh:root@hub", testutil.HubTools(b, hubExtraPeers))
	var d Diagnosis
	var text []byte
	for b.Loop() {
		d, text = diagnoseHub(b, h)
	}
	b.ReportMetric(float64(len(d.Findings)), "findings")
	b.ReportMetric(float64(len(text))/1024, "text-KiB")
}

// TestHubStalePeersAreOneFindingEach diagnoses the hub with 1,000 peers: its
// 998 offline ones are two findings (down and idle), whose text names five
// and counts the rest, and whose JSON lists every one.
func TestHubStalePeersAreOneFindingEach(t *testing.T) {
	d, text := diagnoseHub(t, targettest.InShell(t, "ssh:root@hub", testutil.HubTools(t, hubExtraPeers)))
	var stale []finding.Finding
	for _, f := range d.Findings {
		if f.ID == catalog.WGHandshakeStale {
			stale = append(stale, f)
		}
	}
	if len(stale) != 2 {
		t.Fatalf("%d wg.handshake-stale findings, want 2 (down, idle):\n%s", len(stale), text)
	}
	for _, want := range []string{
		"200 peers of wg-mpeer-r are down: traffic is expected but none shook hands within 3m0s (newest 4m0s ago, oldest 26h",
		"798 idle peers of wg-mpeer-r have no handshake within 3m0s (newest 5m37s ago, oldest 26h",
		"and 195 more.", "and 793 more.",
		"… and 193 more (--json lists every one)", "… and 792 more (--json lists every one)",
	} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, d); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(js.String(), `"key": "peer `); n != hubExtraPeers {
		t.Errorf("the JSON lists %d stale peers, want %d", n, hubExtraPeers)
	}
}
