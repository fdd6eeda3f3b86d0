package report

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestRecordHTMLFixture records what "wgperf bench --json" and "wgperf mtu
// --json" print (the same values, encoded the same way) on a lossy lab — 2% of
// forwarded UDP dropped, so the tunnel suffers and the underlay's TCP does
// not — with a 1400-byte hop, as testdata/report/bench.json and mtu.json.
//
// testdata/report/labrun.json is "lab run --json" output, recorded with
//
//	go build -o /tmp/wgh/wgperf ./cmd/wgperf
//	/tmp/wgh/wgperf lab run pmtud-blackhole lossy-cubic --time 2 --json --name wgh1 > testdata/report/labrun.json
func TestRecordHTMLFixture(t *testing.T) {
	if !testutil.Update() {
		t.Skip("the fixtures are recorded with -update (root, iperf3)")
	}
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, lab.Config{Name: "wgh2", Underlay: lab.Shape{RateMbit: 200, LossPct: 2}, PathMTU: 1400, WGMTU: 1340})
	ctx := context.Background()
	a, b := l.Node("a"), l.Node("b")

	rep, err := bench.Measure(ctx, bench.Config{
		Client: l.Target("a"), Server: l.Target("b"), TunnelAddr: b.TunnelAddr, UnderlayAddr: b.UnderlayAddr,
		ClientInterface: a.WGInterface, ServerInterface: b.WGInterface,
		Omit: 1, Seconds: 4, Parallel: 4, UDPMbit: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	save(t, "bench.json", rep)

	res, err := mtu.Run(ctx, mtu.Config{Client: l.Target("a"), Addr: b.UnderlayAddr, Server: l.Target("b"),
		TunnelAddr: b.TunnelAddr, ClientInterface: a.WGInterface})
	if err != nil {
		t.Fatal(err)
	}
	save(t, "mtu.json", res)
}

// save writes v the way the commands' --json does.
func save(t *testing.T, name string, v any) {
	t.Helper()
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "testdata", "report", name), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
