package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/testutil"
)

// Doctor on every broken lab case (its cause ranked first) and on the healthy
// lab is proven by the lab's scenarios: internal/scenario's TestScenarios runs
// doctor between the two sites of each one.

// Without a server, doctor on the black-hole lab says throughput could not be
// judged, and its one-ended DF search to the peer's endpoint still proves the
// black hole.
func TestDoctorOneEndLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ping")
	l := labtest.Up(t, lab.Config{Name: "drone", Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Client: l.Target("a")})
	if err != nil {
		t.Fatal(err)
	}
	noUndeclared(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if rep.Status != StatusUnjudged || rep.Measured.Benched || len(rep.NotJudged) == 0 {
		t.Errorf("status %s, benched %v, not judged %q", rep.Status, rep.Measured.Benched, rep.NotJudged)
	}
	if path := ProbeResult[*mtu.Result](rep, mtu.Def); len(rep.Probes) != 1 || rep.Probes[0].Probe != catalog.ProbeMTU || path == nil || path.Addr != l.Node("b").UnderlayAddr {
		t.Fatalf("probes %+v", rep.Probes)
	}
	if v := rep.Verdict(); v == nil || v.Finding.ID != "mtu.pmtud-blackhole" {
		t.Errorf("verdict %+v, want mtu.pmtud-blackhole", v)
	}
}

// --fix on the PMTUD black hole lowers the WireGuard MTU on both ends (each
// step verified and confirmed) and the tunnel carries bulk TCP both ways again.
func TestDoctorFixBlackHoleLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ping")
	name := "drfb"
	l := labtest.Up(t, labtest.Sized(t, lab.Config{Name: name, Underlay: lab.Shape{RateMbit: 200}, PathMTU: 1400, DropFragNeeded: true}))
	// Persistent config and journals go under the lab's folder, never the host's /etc.
	root := filepath.Join(lab.StateDir, name, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Seconds: 2, Fix: true, FixRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	noUndeclared(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	f := rep.Fix
	if f == nil || !f.Applied || !f.Kept || !f.Confirm || f.After == nil || len(f.Steps) != 2 {
		t.Fatalf("fix %+v", f)
	}
	for _, d := range []bench.DirRate{f.After.Up, f.After.Down} {
		if d.Ratio() < 0.8 {
			t.Errorf("after the fix: tunnel %.1f of underlay %.1f Mbit/s", d.Tunnel, d.Underlay)
		}
	}
	// The exit status judges what remains: the black hole is fixed.
	if worst, any := finding.Worst(rep.Remaining()); any && worst == finding.Critical {
		t.Errorf("critical findings remain after the fix: %v", rep.Remaining())
	}
	for _, node := range []string{"a", "b"} {
		out, err := l.Target(node).ReadFile(ctx, "/sys/class/net/"+l.WGInterface(node)+"/mtu")
		if err != nil || strings.TrimSpace(string(out)) != "1340" {
			t.Errorf("%s: WireGuard MTU %q (%v), want 1340", node, out, err)
		}
	}
}

// --fix on a path that throttles WireGuard's port moves both ends as one:
// B, the far end, to the next port first (its confirm window open, nothing
// measured while the tunnel is cut), then A's peer endpoint, verified
// through the tunnel; both confirmed, and the tunnel carries the link again.
func TestDoctorFixPortThrottledLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "ping")
	name := "drpt"
	l := labtest.Up(t, labtest.Sized(t, lab.Config{Name: name, Underlay: lab.Shape{RateMbit: 200}, PortPolicePct: 25, ClientPort: 51900}))
	// Persistent config and journals go under the lab's folder, never the host's /etc.
	root := filepath.Join(lab.StateDir, name, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Client: l.Target("a"), Server: l.Target("b"), Seconds: 2, Fix: true, FixRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	noUndeclared(t, rep)
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	f := rep.Fix
	if f == nil || f.ID != "path.port-throttled" || !f.Applied || !f.Kept || !f.Confirm || f.After == nil || len(f.Steps) != 2 {
		t.Fatalf("fix %+v", f)
	}
	for i, want := range []struct{ half, host string }{{"far", l.Target("b").String()}, {"near", l.Target("a").String()}} {
		if st := f.Steps[i]; st.Half != want.half || st.Host.String() != want.host || !st.Confirmed {
			t.Errorf("step %d: %+v, want the %s end's half on %s, confirmed", i, st, want.half, want.host)
		}
	}
	for _, d := range []bench.DirRate{f.After.Up, f.After.Down} {
		if d.Ratio() < 0.8 {
			t.Errorf("after the fix: tunnel %.1f of underlay %.1f Mbit/s", d.Tunnel, d.Underlay)
		}
	}
	out, err := l.Target("b").Run(ctx, "wg", "show", l.WGInterface("b"), "listen-port")
	if err != nil || strings.TrimSpace(string(out)) != "51821" {
		t.Errorf("B listens on %q (%v), want 51821", out, err)
	}
}
