package mtu

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// R clamps the MSS of every SYN it forwards to 1360: both ends see 1460 go
// out and 1360 come in, which implies a 1400-byte path and WireGuard MTU 1340.
func TestCaptureSeesRouterClamp(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "tcpdump")
	l := labtest.Up(t, lab.Config{Name: "wgvcap", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clamp := "table inet wgvclamp {\n chain clamp {\n  type filter hook forward priority mangle;\n  tcp flags syn tcp option maxseg size set 1360\n }\n}\n"
	if _, err := l.Target("r").RunInput(ctx, []byte(clamp), "nft", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	res, err := Capture(ctx, CaptureConfig{Client: l.Target("a"), Server: l.Target("b"), Addr: l.Node("b").UnderlayAddr, ClientInterface: l.WGInterface("a")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("forward %+v, reverse %+v, path MTU %d, WireGuard MTU %d, %.1fs", res.Forward, res.Reverse, res.PathMTU, res.WGMTU, res.Seconds)
	if res.Forward.Sent != 1460 || res.Forward.Received != 1360 || res.Reverse.Sent != 1460 || res.Reverse.Received != 1360 {
		t.Errorf("MSS forward %+v, reverse %+v; want 1460 sent and 1360 received both ways", res.Forward, res.Reverse)
	}
	if res.NarrowestMSS != 1360 || res.PathMTU != 1400 || res.WGMTU != 1340 {
		t.Errorf("MSS %d, path MTU %d, WireGuard MTU %d; want 1360, 1400, 1340", res.NarrowestMSS, res.PathMTU, res.WGMTU)
	}
	if len(res.Findings) != 1 || res.Findings[0].ID != "mtu.tunnel-too-large" {
		t.Errorf("findings %+v, want mtu.tunnel-too-large (the lab's WireGuard MTU is 1420)", res.Findings)
	}
}
