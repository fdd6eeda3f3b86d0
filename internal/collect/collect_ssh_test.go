package collect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestCollectOverSSH collects lab node B once through its namespace and once
// over ssh from node A through the tunnel: both see the same WireGuard
// interface (and only B's, although the UAPI socket folder is shared by every
// lab on the machine) and the same routes.
func TestCollectOverSSH(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "wgs2", Topology: lab.SiteToSite})
	spec := labtest.SSHD(t, l, "b")
	remote, err := target.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	viaSSH, err := collect.Collect(ctx, remote, collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("collected %s in %.2fs", spec, time.Since(start).Seconds())
	viaNetns, err := collect.Collect(ctx, l.Target("b"), collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if viaSSH.Host.String() != spec {
		t.Errorf("snapshot host %q, want %q", viaSSH.Host, spec)
	}
	if len(viaSSH.WireGuard) != 1 || viaSSH.WireGuard[0].Name != l.WGInterface("b") || viaSSH.WireGuard[0].PublicKey != l.Node("b").PublicKey {
		t.Fatalf("WireGuard over ssh: %+v", viaSSH.WireGuard)
	}
	if d := cmp.Diff(stableWG(viaNetns.WireGuard), stableWG(viaSSH.WireGuard)); d != "" {
		t.Errorf("WireGuard (-netns +ssh):\n%s", d)
	}
	if d := cmp.Diff(stableRoutes(viaNetns.Routes), stableRoutes(viaSSH.Routes)); d != "" {
		t.Errorf("routes (-netns +ssh):\n%s", d)
	}
	if len(viaSSH.Routes) == 0 || viaSSH.System.Kernel == "" || viaSSH.System.Kernel != viaNetns.System.Kernel {
		t.Errorf("routes %d, kernel %q vs %q", len(viaSSH.Routes), viaSSH.System.Kernel, viaNetns.System.Kernel)
	}
	// Nothing that works in the namespace failed over ssh.
	if d := cmp.Diff(viaNetns.Notes, viaSSH.Notes); d != "" {
		t.Errorf("notes (-netns +ssh):\n%s", d)
	}
}

// stableWG drops what changes between two collections (traffic counters and
// handshake times).
func stableWG(ws []facts.WGInterface) []facts.WGInterface {
	out := make([]facts.WGInterface, len(ws))
	for i, w := range ws {
		out[i] = w
		out[i].Peers = nil
		for _, p := range w.Peers {
			p.RxBytes, p.TxBytes, p.LatestHandshake = 0, 0, time.Time{}
			out[i].Peers = append(out[i].Peers, p)
		}
	}
	return out
}

// stableRoutes leaves out IPv6 link-local host routes: the kernel adds each one
// when duplicate address detection finishes, which may fall between the two
// collections of a lab that came up a moment ago.
func stableRoutes(rs []facts.Route) []facts.Route {
	var out []facts.Route
	for _, r := range rs {
		if r.Family == "inet6" && r.Table == "local" && strings.HasPrefix(r.Dst, "fe80:") {
			continue
		}
		out = append(out, r)
	}
	return out
}
