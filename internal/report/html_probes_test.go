package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// iperfRun reads a recorded iperf3 -J output from testdata/probe/iperf.
func iperfRun(t testing.TB, name string) *iperf.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "probe", "iperf", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := iperf.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// sweepDoc is a shape-sweep whose steps are recorded iperf3 uploads standing
// in for its caps: uncapped the lossy CUBIC run (61 Mbit/s, unsteady), capped
// at 200 the clean run (191 Mbit/s, steady) and at 250 a steady run with
// retransmits (190 Mbit/s). Recommendation and finding come from shaping.
func sweepDoc(t testing.TB) Document {
	res := &shaping.Result{Client: targettest.Spec("ssh:root@vps"), Device: "wg0", Previous: "qdisc noqueue 0: root refcnt 2", Seconds: 42}
	for _, st := range []struct {
		capMbit int
		file    string
	}{{0, "tcp-lossy-cubic.json"}, {200, "tcp-upload.json"}, {250, "tcp-reverse-lossy-cubic.json"}} {
		r := iperfRun(t, st.file)
		res.Steps = append(res.Steps, shaping.Measured(st.capMbit, r))
	}
	res.Recommended = shaping.Recommend(res.Steps, shaping.PreferSteady)
	res.Findings = shaping.Findings(res)
	return FromShapeSweep(res)
}

// fixDoc is "fix --apply --verify" of BBR on a lossy tunnel: the bench before
// the change is the recorded lossy CUBIC pair, after it the clean pair.
func fixDoc(t testing.TB) Document {
	measured := []*bench.Report{{}, {}}
	for i, files := range [][2]string{{"tcp-lossy-cubic.json", "tcp-reverse-lossy-cubic.json"}, {"tcp-upload.json", "tcp-reverse.json"}} {
		for k, dir := range []string{bench.Upload, bench.Download} {
			r := iperfRun(t, files[k])
			measured[i].Runs = append(measured[i].Runs, bench.Run{Spec: bench.Spec{Path: bench.PathTunnel, Direction: dir, Streams: 1},
				Addr: "10.77.0.2", Result: r, Stats: bench.Summarise(r)})
		}
	}
	figure := func(rep *bench.Report) fix.Measurement {
		up, down := rep.Runs[0].Stats.Mbit, rep.Runs[1].Stats.Mbit
		return fix.Measurement{Name: "tunnel throughput", Value: (up + down) / 2, Unit: "Mbit/s",
			Detail: fmt.Sprintf("upload %.1f, download %.1f Mbit/s to 10.77.0.2", up, down)}
	}
	bbr, err := remedy.Congestion("bbr", false, "6.1.0")
	if err != nil {
		t.Fatal(err)
	}
	fx := remedy.Fix("Switch TCP congestion control to BBR", bbr)
	found := finding.Finding{ID: catalog.TCPCongestionControl, Severity: finding.Warning, Host: targettest.Spec("netns:wgl-demo-a"),
		Title: "TCP uses cubic and retransmits 1.6% of its segments", Fixes: []finding.Fix{fx}}
	j := &fix.Journal{ID: "20261122T005600.000000000Z", Host: targettest.Spec("netns:wgl-demo-a"), Started: time.Date(2026, 11, 22, 0, 56, 0, 0, time.UTC),
		State: fix.StateApplied,
		Entries: []fix.Entry{{Findings: []finding.ID{catalog.TCPCongestionControl}, Description: fx.Description, Status: fix.EntryApplied,
			Step: remedy.Step{Kind: remedy.KindCongestion, Summary: "net.ipv4.tcp_congestion_control cubic -> bbr", Commands: fx.Commands}}},
		Verify: &fix.Verification{Before: figure(measured[0]), After: figure(measured[1])},
	}
	j.Verify.Kept = j.Verify.After.Better(j.Verify.Before)
	return FromFix(j, []finding.Finding{found}, measured, nil)
}

// TestICMPBurstReport renders the recorded icmp-burst experiment (banIP's
// limit on the multi-WAN router): both modes, the chart of failures per
// target, the counter that grew and the finding with its fix.
func TestICMPBurstReport(t *testing.T) {
	doc := readFixture(t, "icmp-burst.json")
	if doc.ICMPBurst == nil || len(doc.Findings) != 1 {
		t.Fatalf("icmp-burst.json read as %q: icmp burst %v, %d findings", doc.Title, doc.ICMPBurst != nil, len(doc.Findings))
	}
	page := render(t, *doc)
	count := selfContained(t, page)
	if count["svg"] != 1 {
		t.Errorf("%d charts, want the failures per target", count["svg"])
	}
	lacks(t, page, `<section id="icmp-burst">`, "Pings per mode",
		`<td>one-shot pings</td><td class="num">30</td><td class="num">5</td><td class="num">17%</td>`,
		`<td>persistent ping</td><td class="num">15</td><td class="num">0</td>`,
		"ICMP burst: failed pings per target", "Failed pings per target",
		"Firewall counters that grew during the test", "cnt_icmpflood",
		"icmp.ratelimit-drops", "uci set banip.global.ban_icmplimit=250")
	if strings.Contains(page, "Bench matrix") || strings.Contains(page, `id="shape-sweep"`) {
		t.Error("an icmp-burst report has other sections")
	}
}

// TestShapeSweepReport renders a sweep: the table of caps with the
// recommended one, the bar chart of caps and the per-second charts of every
// run, and the collapse-knee finding with its tbf fix.
func TestShapeSweepReport(t *testing.T) {
	doc := sweepDoc(t)
	if doc.Sweep.Recommended != 200 {
		t.Fatalf("recommended cap %d, want 200", doc.Sweep.Recommended)
	}
	page := render(t, doc)
	count := selfContained(t, page)
	// The caps' bars, then throughput, cwnd and retransmits per second.
	if count["svg"] != 1+3 {
		t.Errorf("%d charts, want 4", count["svg"])
	}
	lacks(t, page, `<section id="shape-sweep">`, "Recommended: cap wg0 at 200 Mbit/s",
		"<td>cap 200 Mbit/s <span class=\"sev ok\">recommended</span></td>", "<td>uncapped</td>",
		"Shape sweep: tunnel throughput per rate cap", "Shape sweep: 1 stream, throughput per second",
		"tunnel upload (cap 250 Mbit/s)", "one line per run, each in its own colour",
		"throughput.collapse-knee", "tc qdisc replace dev wg0 root tbf rate 200mbit")
	if strings.Contains(page, "Bench matrix") {
		t.Error("a sweep report has a bench matrix; its table is the caps'")
	}
}

// TestFixVerifyReport renders "fix --apply --verify": the verdict and the
// figures, the bars before and after per direction, the steps with their
// commands, the fixed finding, and the bench runs before and after charted.
func TestFixVerifyReport(t *testing.T) {
	doc := fixDoc(t)
	page := render(t, doc)
	count := selfContained(t, page)
	// Before/after bars; then per second throughput, cwnd and retransmits.
	if count["svg"] != 1+3 {
		t.Errorf("%d charts, want 4", count["svg"])
	}
	lacks(t, page, `<section id="fix">`, "kept: the change helped", "<dt>Before</dt><dd>125.5 Mbit/s",
		"<dt>After</dt><dd><b>191.2</b> Mbit/s", "&#43;52.3%",
		"Tunnel throughput before and after the fix", "Steps, in the order applied",
		"sysctl -w net.ipv4.tcp_congestion_control=bbr", "Undo with: wgperf fix rollback --host netns:wgl-demo-a",
		"tcp.congestion-control", "Bench matrix", "tunnel upload (before fix)", "tunnel download (after fix)")
	if i, j := strings.Index(page, `id="fix"`), strings.Index(page, `id="findings"`); i < 0 || j < i {
		t.Error("the fix section does not come first")
	}
	// A rolled-back change says so and offers no undo.
	doc.Fix.Verify.Kept, doc.Fix.State = false, fix.StateRolledBack
	page = render(t, doc)
	lacks(t, page, "rolled back: the change did not help", "Journal state: rolled-back.")
	if strings.Contains(page, "Undo with") {
		t.Error("a rolled-back fix offers an undo")
	}
}

// TestReadDocumentProbes: the JSON of icmp-burst and shape-sweep become
// their reports (wgperf report --from), with or without the document header.
func TestReadDocumentProbes(t *testing.T) {
	sweep := sweepDoc(t)
	raw, err := jsonOf(sweep.Sweep)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{raw, `{"schema_version": 1, "kind": "shape-sweep",` + strings.TrimPrefix(raw, "{")} {
		d, err := ReadDocument(strings.NewReader(in))
		if err != nil || d.Sweep == nil || d.Sweep.Recommended != 200 || !strings.HasPrefix(d.Title, "wgperf shape-sweep") {
			t.Errorf("shape-sweep JSON: %v, %+v", err, d)
		}
	}
	if d := readFixture(t, "icmp-burst.json"); !strings.HasPrefix(d.Title, "wgperf icmp-burst: netns:a") {
		t.Errorf("icmp-burst title %q", d.Title)
	}
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
