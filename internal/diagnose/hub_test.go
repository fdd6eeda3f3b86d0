package diagnose

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
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
