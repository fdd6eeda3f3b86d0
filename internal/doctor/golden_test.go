package doctor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

func readJSON(t *testing.T, v any, parts ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// recordedReport is doctor's report on recorded snapshots of client and
// server (server "" for one end), judged with the recorded bench and path
// MTU search when given, as Run judges what it measured.
func recordedReport(t *testing.T, client, server string, benched, stalled bool, path *mtu.Result) *Report {
	t.Helper()
	var snaps []*facts.Snapshot
	for _, name := range []string{client, server} {
		if name == "" {
			continue
		}
		var s facts.Snapshot
		readJSON(t, &s, "snapshots", name)
		snaps = append(snaps, &s)
	}
	checked := check.Run(snaps, check.Options{Now: snaps[0].CollectedAt})
	d := diagnose.NewDiagnosis(snaps, checked)
	r := &Report{Kind: Kind, SchemaVersion: SchemaVersion, Client: snaps[0].Host, Probes: []ProbeRun{}, passive: map[causeKey]bool{},
		Hosts: d.Hosts, Skipped: d.Skipped, Seconds: 21}
	for _, f := range checked.Findings {
		r.passive[key(f)] = true
	}
	found := append([]finding.Finding{}, checked.Findings...)
	r.Measured = Measured{Client: r.Client, Expected: bench.SingleHopRatio}
	r.Threshold = "single hop: the tunnel should carry ≥ 90% of the underlay"
	if server != "" {
		r.Server = snaps[1].Host
		r.Measured.Server = r.Server
	} else {
		r.Threshold = "not applied: without --server nothing was measured"
		r.NotJudged = []string{"throughput: tunnel against underlay needs the other end (--server)"}
	}
	if benched {
		var b bench.Report
		readJSON(t, &b, "report", "bench.json")
		b.Client, b.Server = r.Client, r.Server
		bench.Analyze(&b)
		r.Bench = &b
		r.Measured.Benched = true
		r.Measured.Throughput = b.Throughput()
		if stalled {
			r.Measured.Stalled, r.Measured.Up.Tunnel = true, 0
			r.BenchError = "netns:wgl-wgh2-a: iperf3 stalled: the test to 10.77.0.2 did not finish within 12s"
		}
		found = append(found, b.Findings...)
	}
	r.judge(found)
	if path != nil {
		r.SetResult(mtu.Def, path)
		plans := PlanProbes(r.Status == StatusHealthy, r.Findings, r.Measured, r.Bench, snaps[0])
		for _, p := range plans {
			r.Probes = append(r.Probes, ProbeRun{ProbePlan: p, Summary: "recorded", Seconds: 11})
		}
		found = append(found, path.Findings...)
		r.judge(found)
	}
	return r
}

// TestReportGolden holds doctor's text and JSON on recorded inputs: the
// ranking, the verdict's evidence, gain and command, the other causes, the
// probes and what --fix did.
func TestReportGolden(t *testing.T) {
	var path mtu.Result
	readJSON(t, &path, "report", "mtu.json")
	// The same search on a path whose router drops ICMP frag-needed.
	hole := path
	hole.Client, hole.ClientIface, hole.BlackHole, hole.FirstFailed = targettest.Spec("netns:wgl-wgd4-a"), "wg-wgd4-a", true, 1401
	hole.Findings = mtu.Findings(&hole)
	for _, tc := range []struct {
		name           string
		client, server string
		benched        bool
		stalled        bool
		path           *mtu.Result
		fix            *FixOutcome
		uplinks        string // recorded each-uplink measurement
	}{
		{name: "one-end", client: "lab-multiwan-stale-a.json"},
		// With each uplink as doctor measured it in the stale-endpoint-route scenario: the tunnel over each, the hops.
		{name: "stale-route", client: "lab-multiwan-stale-a.json", server: "lab-healthy-b.json", benched: true, uplinks: "lab-multiwan-stale.json"},
		{name: "lossy-mtu", client: "lab-loss3-udpbuf64k-a.json", server: "lab-loss3-udpbuf64k-b.json", benched: true, path: &path},
		{name: "blackhole", client: "lab-mtu1480-icmplimit-lan-a.json", server: "lab-mtu1480-icmplimit-lan-b.json", benched: true, stalled: true, path: &hole},
		{name: "icmp-lan", client: "lab-mtu1480-icmplimit-lan-a.json", server: "lab-mtu1480-icmplimit-lan-b.json", benched: true},
		{name: "fixed", client: "lab-multiwan-stale-a.json", server: "lab-healthy-b.json", benched: true, fix: &FixOutcome{
			Host: targettest.Spec("netns:wgl-wgd3-a"), ID: "route.stale-endpoint", Applied: true, Kept: true, Confirm: true,
			Steps: []FixStep{{Host: targettest.Spec("netns:wgl-wgd3-a"), IDs: []finding.ID{"route.stale-endpoint"}, Applied: true, Kept: true, Confirmed: true,
				Journal: &fix.Journal{ID: "20260407-195600", Host: targettest.Spec("netns:wgl-wgd3-a"), Verify: &fix.Verification{
					Before: fix.Measurement{Name: "tunnel throughput", Value: 19, Unit: "Mbit/s", Detail: "upload 18.0, download 20.0 Mbit/s to 10.77.0.2"},
					After:  fix.Measurement{Name: "tunnel throughput", Value: 180, Unit: "Mbit/s", Detail: "upload 180.0, download 180.0 Mbit/s to 10.77.0.2"},
					Kept:   true}}}},
			After: &Measured{Benched: true, Throughput: bench.Throughput{Up: bench.DirRate{Tunnel: 180, Underlay: 189}, Down: bench.DirRate{Tunnel: 181, Underlay: 190}}, Expected: 0.9},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := recordedReport(t, tc.client, tc.server, tc.benched, tc.stalled, tc.path)
			if tc.uplinks != "" {
				readJSON(t, &r.Uplinks, "probe", "uplinks", tc.uplinks)
			}
			if tc.fix != nil {
				tc.fix.Before = r.Measured
				r.Fix = tc.fix
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", tc.name+".txt"), text.Bytes())
			held := *r
			if tc.name != "blackhole" {
				held.Bench = nil // the recorded bench, held once (blackhole) is enough
			}
			js, err := json.MarshalIndent(&held, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", tc.name+".json"), append(js, '\n'))
			var remaining []string
			for _, f := range r.Remaining() {
				remaining = append(remaining, string(f.ID)+" "+f.Host.String())
			}
			rem, _ := json.MarshalIndent(remaining, "", "  ")
			testutil.Golden(t, filepath.Join("testdata", tc.name+".remaining.json"), append(rem, '\n'))
			if tc.name != "blackhole" && tc.name != "fixed" {
				return // one page of a diagnosis and one of a fix hold the HTML document
			}
			doc := r.Document()
			doc.Generated = time.Date(2026, 4, 7, 19, 56, 0, 0, time.UTC)
			var page bytes.Buffer
			if err := report.WriteHTML(&page, doc); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", tc.name+".html"), page.Bytes())
		})
	}
}
