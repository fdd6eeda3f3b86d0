package report

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

var recordHTML = flag.Bool("record-html", false, "record testdata/report/lab.json from a real lab (root, iperf3)")

// TestRecordHTMLFixture measures a lossy lab — 2% of forwarded UDP dropped, so
// the tunnel suffers and the underlay's TCP does not — and a 1400-byte hop
// (tunnel MTU 1340 fits it), and
// saves everything the HTML report shows as testdata/report/lab.json.
func TestRecordHTMLFixture(t *testing.T) {
	if !*recordHTML {
		t.Skip("the fixture is recorded with -record-html")
	}
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, lab.Config{Name: "wgx3", Underlay: lab.Shape{RateMbit: 200, LossPct: 2}, PathMTU: 1400, WGMTU: 1340})
	ctx := context.Background()
	a, b := l.Target("a"), l.Target("b")
	doc := Document{Title: "wgperf lab wgx3: 2% underlay loss, 1400-byte hop", Generated: time.Now().UTC()}

	for _, path := range []struct{ name, addr string }{{PathUnderlay, "203.0.113.2"}, {PathTunnel, "10.77.0.2"}} {
		for _, dir := range []string{Upload, Download} {
			res, err := iperf.Run(ctx, a, b, iperf.Test{Addr: path.addr, Seconds: 4, Reverse: dir == Download})
			if err != nil {
				t.Fatalf("%s %s: %v", path.name, dir, err)
			}
			doc.Runs = append(doc.Runs, BenchRun{Path: path.name, Direction: dir, Result: res})
		}
	}

	// Seed 002's fix for loss in the tunnel, measured: CUBIC, then BBR.
	var mbit [2]float64
	start := time.Now()
	for i, cc := range []string{"cubic", "bbr"} {
		res, err := iperf.Run(ctx, a, b, iperf.Test{Addr: "10.77.0.2", Seconds: 4, Congestion: cc})
		if err != nil {
			t.Fatalf("%s: %v", cc, err)
		}
		mbit[i] = res.Mbit()
	}
	doc.Scenarios = append(doc.Scenarios, ScenarioResult{
		Name: "lossy-cubic", Symptom: "tunnel slow under 2% loss", Finding: "tcp.congestion-control",
		Fix: "use BBR", Before: mbit[0], After: mbit[1], Seconds: time.Since(start).Seconds(),
	})

	// A path-MTU bisection with DF pings from A to B's endpoint.
	m := &MTUSearch{From: a.String(), To: "203.0.113.2"}
	lo, hi := 1200, 1500
	try := func(size int) bool {
		_, err := a.Run(ctx, "ping", "-n", "-q", "-M", "do", "-c", "1", "-W", "1", "-s", fmt.Sprint(size-28), "203.0.113.2")
		step := MTUStep{Size: size, OK: err == nil}
		var te *target.Error
		if errors.As(err, &te) {
			step.Detail = "no reply"
			if msg := lastLine(te.Stderr); msg != "" {
				step.Detail += ": " + msg
			}
		}
		m.Steps = append(m.Steps, step)
		return err == nil
	}
	if !try(lo) {
		t.Fatal("1200-byte ping does not pass")
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if try(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	m.MTU = lo
	doc.MTU = m

	var snaps []*facts.Snapshot
	for _, n := range []string{"a", "b"} {
		s, err := collect.Collect(ctx, l.Target(n), collect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	d := NewDiagnosis(snaps, check.Run(snaps, check.Options{}))
	doc.Hosts, doc.Findings, doc.Skipped = d.Hosts, d.Findings, d.Skipped

	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "testdata", "report", "lab.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lastLine(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
