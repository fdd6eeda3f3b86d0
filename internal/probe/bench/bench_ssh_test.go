package bench_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestBenchServerOverSSH benches A against B where B is reached only over ssh
// (through the tunnel): discovery, the iperf3 servers and B's counters all go
// through ssh, and every server is gone when Measure returns.
func TestBenchServerOverSSH(t *testing.T) {
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, lab.Config{Name: "wgs3", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}})
	remote, err := target.Parse(labtest.SSHD(t, l, "b"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := discover.Tunnel(ctx, l.Target("a"), remote)
	if err != nil {
		t.Fatal(err)
	}
	if ep.TunnelAddr != l.Node("b").TunnelAddr || ep.UnderlayAddr != l.Node("b").UnderlayAddr || ep.ServerInterface != l.WGInterface("b") {
		t.Fatalf("discovered over ssh %+v, lab node b is %+v", ep, l.Node("b"))
	}
	rep, err := bench.Measure(ctx, bench.Config{Client: l.Target("a"), Server: remote, TunnelAddr: ep.TunnelAddr, UnderlayAddr: ep.UnderlayAddr,
		ClientInterface: ep.ClientInterface, ServerInterface: ep.ServerInterface, Quick: true, Seconds: 2, Omit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Server.Same(target.Of(remote)) || len(rep.Cells) != 2 {
		t.Fatalf("server %s, cells %+v", rep.Server, rep.Cells)
	}
	for _, c := range rep.Cells {
		t.Logf("%s: tunnel %.1f / underlay %.1f Mbit/s = %.2f", c.Direction, c.TunnelMbit, c.UnderlayMbit, c.Ratio)
		// The ratio itself is the healthy-lab test's business; here it must exist.
		if c.TunnelMbit <= 0 || c.UnderlayMbit <= 0 || c.Ratio <= 0 {
			t.Errorf("%s: no ratio from %+v", c.Direction, c)
		}
	}
	// Every server started over ssh has exited: nothing listens on the port in B.
	out, err := remote.Run(ctx, "ss", "-Htln", "sport = :5299")
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("iperf3 server still listening on b: %q, %v", out, err)
	}
	// A server whose one test is over may still be writing its report when the
	// ssh session that started it is stopped; it must be gone soon after.
	// (pgrep would see every namespace's processes: ask B's namespace.)
	var left []string
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if left = iperfIn(t, l.Netns("b")); len(left) == 0 {
			t.Logf("servers gone %.1fs after Measure returned", time.Since(start).Seconds())
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("iperf3 left running in b: %q", left)
			break
		}
	}
}

// iperfIn lists the iperf3 command lines running in namespace ns.
func iperfIn(t *testing.T, ns string) []string {
	t.Helper()
	out, err := target.Local().Run(context.Background(), "ip", "netns", "pids", ns)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, pid := range strings.Fields(string(out)) {
		cmd, err := os.ReadFile("/proc/" + pid + "/cmdline")
		if err == nil && strings.Contains(string(cmd), "iperf3") {
			found = append(found, strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return found
}
