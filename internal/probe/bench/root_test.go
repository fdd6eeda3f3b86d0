package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// A healthy lab (200 Mbit/s, or what this machine carries with headroom): the tunnel reaches at least 90% of the underlay
// both ways and bench reports no throughput finding.
func TestBenchHealthyLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, labtest.Sized(t, lab.Config{Name: "wgb1", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := discover.Tunnel(ctx, l.Target("a"), l.Target("b"))
	if err != nil {
		t.Fatal(err)
	}
	if ep.TunnelAddr != l.Node("b").TunnelAddr || ep.UnderlayAddr != l.Node("b").UnderlayAddr || ep.ClientInterface != l.WGInterface("a") {
		t.Fatalf("discovered %+v, lab node b is %+v", ep, l.Node("b"))
	}
	cfg := Config{Client: l.Target("a"), Server: l.Target("b"), TunnelAddr: ep.TunnelAddr, UnderlayAddr: ep.UnderlayAddr,
		ClientInterface: ep.ClientInterface, ServerInterface: ep.ServerInterface, Quick: true, Seconds: 2, Omit: 1}
	rep, err := Measure(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Two-second runs on a shared 2-core machine leave ~5% of margin above
	// 0.9: a bench that fell short is measured once more before judging.
	for _, c := range rep.Cells {
		if c.Ratio < SingleHopRatio {
			t.Logf("first bench: %s ratio %.2f; measuring again", c.Direction, c.Ratio)
			if rep, err = Measure(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if len(rep.Cells) != 2 {
		t.Fatalf("cells %+v", rep.Cells)
	}
	for _, c := range rep.Cells {
		t.Logf("%s: tunnel %.1f / underlay %.1f Mbit/s = %.2f", c.Direction, c.TunnelMbit, c.UnderlayMbit, c.Ratio)
		if c.Ratio < SingleHopRatio {
			t.Errorf("%s ratio %.2f < %.2f", c.Direction, c.Ratio, SingleHopRatio)
		}
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(string(f.ID), "throughput.") {
			t.Errorf("healthy lab: %s %s", f.ID, f.Title)
		}
	}
	// Every run stopped its server: the port is free again.
	if out, _ := l.Target("b").Run(ctx, "ss", "-Htln", "sport = :5299"); strings.TrimSpace(string(out)) != "" {
		t.Errorf("iperf3 server still listening on b: %s", out)
	}
}

// A table of node b's own drops 3% of the tunnel's datagrams as they arrive:
// the server's delta of the tunnel upload names that rule with the packets it
// dropped, and the run's notes say so.
func TestBenchAttributesFirewallDrops(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, lab.Config{Name: "wgc2", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Drop per datagram, as the lab's loss does, not whole GSO bursts.
	for _, n := range []string{"a", "b"} {
		if _, err := l.Target(n).Run(ctx, "ethtool", "-K", "eth0", "tx-udp-segmentation", "off"); err != nil && !target.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	b := l.Node("b")
	rules := fmt.Sprintf("table inet wgc_drop {\n chain input {\n  type filter hook input priority 0; policy accept;\n"+
		"  udp dport %d numgen random mod 100 < 3 counter drop\n }\n}\n", b.ListenPort)
	if _, err := l.Target("b").RunInput(ctx, []byte(rules), "nft", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	server := &sampleCounter{Target: l.Target("b")}
	rep, err := Measure(ctx, Config{Client: l.Target("a"), Server: server, TunnelAddr: b.TunnelAddr, Quick: true, Seconds: 2, Omit: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The samples after a run are the next run's samples before it.
	if n := server.samples.Load(); n != int32(len(rep.Runs)+1) {
		t.Errorf("%d samples of the server for %d runs back to back, want %d", n, len(rep.Runs), len(rep.Runs)+1)
	}
	up := find(rep, PathTunnel, Upload, 1)
	if up == nil {
		t.Fatalf("no tunnel upload run in %+v", rep.Runs)
	}
	for _, run := range rep.Runs {
		t.Logf("%s: %.1f Mbit/s, notes %q", run.Spec, run.Stats.Mbit, run.Notes)
	}
	var dropped uint64
	for _, g := range up.Server.Firewall {
		if g.Rule != nil && g.Rule.Table == "wgc_drop" && g.Rule.Chain == "input" {
			dropped = g.Packets
		}
	}
	if dropped == 0 {
		t.Fatalf("server's firewall drops %+v: want the wgc_drop input rule with packets > 0", up.Server.Firewall)
	}
	want := fmt.Sprintf("receiver (%s) dropped %s packets in the firewall: inet wgc_drop input handle", l.Target("b"), Commas(int64(dropped)))
	if !slices.ContainsFunc(up.Notes, func(n string) bool {
		return strings.HasPrefix(n, want) && strings.Contains(n, "numgen random mod 100 < 3")
	}) {
		t.Errorf("notes %q: want one starting %q and naming the rule", up.Notes, want)
	}
}

// A tunnel whose egress on A bounces between 4 Mbit/s and all it carries
// every 2 s over a steady 40 Mbit/s underlay, judged against two hops'
// expectation (0.5): its upload's mean lands either side of the line by
// phase, within the error of its wide spread, so bench runs the cell again,
// tunnel and underlay side by side, and judges it by the medians.
func TestBenchRepeatsACellOneSampleCannotSettle(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "tc")
	l := labtest.Up(t, lab.Config{Name: "wgr1", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 40}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, wg := l.Target("a"), l.WGInterface("a")
	bounce, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; bounce.Err() == nil; i++ {
			rate := []string{"4mbit", "1gbit"}[i%2]
			if _, err := a.Run(bounce, "tc", "qdisc", "replace", "dev", wg, "root", "tbf", "rate", rate, "burst", "64kb", "latency", "50ms"); err != nil && bounce.Err() == nil {
				t.Errorf("tc on %s: %v", wg, err)
				return
			}
			select {
			case <-bounce.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	defer func() { stop(); <-done }()
	b := l.Node("b")
	rep, err := Measure(ctx, Config{Client: a, Server: l.Target("b"), TunnelAddr: b.TunnelAddr, UnderlayAddr: b.UnderlayAddr,
		ClientInterface: wg, ServerInterface: l.WGInterface("b"), Quick: true, Seconds: 3, Omit: 1, Hops: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range rep.Runs {
		t.Logf("%s: %s, cv %.2f, repeats %+v", run.Spec, spreadText(run), run.Stats.CV, run.Repeats)
	}
	var up *Cell
	for i, c := range rep.Cells {
		t.Logf("cell %+v", c)
		if c.Direction == Upload {
			up = &rep.Cells[i]
		}
	}
	if up == nil {
		t.Fatalf("no upload cell in %+v", rep.Cells)
	}
	tunnel, underlay := find(rep, PathTunnel, Upload, 1), find(rep, PathUnderlay, Upload, 1)
	if up.Samples < 2 || len(tunnel.Repeats) != up.Samples-1 || len(underlay.Repeats) != up.Samples-1 {
		t.Fatalf("upload cell %+v: want at least 2 samples of each path, side by side", up)
	}
	if up.TunnelMbit != tunnel.Rate() || up.UnderlayMbit != underlay.Rate() {
		t.Errorf("cell %.1f/%.1f, medians %.1f/%.1f", up.TunnelMbit, up.UnderlayMbit, tunnel.Rate(), underlay.Rate())
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("(median of %d: ", up.Samples); !strings.Contains(text.String(), want) {
		t.Errorf("table without %q:\n%s", want, text.String())
	}
}

// sampleCounter counts the counter samples taken of a host: each reads
// /proc/net/softnet_stat in one batched shell.
type sampleCounter struct {
	target.Target
	samples atomic.Int32
}

func (s *sampleCounter) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "/proc/net/softnet_stat") }) {
		s.samples.Add(1)
	}
	return s.Target.Run(ctx, name, args...)
}
