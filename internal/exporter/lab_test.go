package exporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// staleRouteCmd pins A's route to B's endpoint on the backup uplink, as netifd
// did in seed 000 when WireGuard came up while the fiber was down.
var staleRouteCmd = []string{"ip", "route", "replace", "203.0.113.2", "via", "192.0.2.1", "dev", "eth1", "proto", "static", "metric", "20"}

// breakMultiWAN makes node a of a multi-wan lab show seed 000: the stale
// endpoint route, and ICMP dropped by the uplink's rate limit (R floods A's
// primary address with pings, as mwan3's health checks would).
func breakMultiWAN(t testing.TB, l *lab.Lab) {
	t.Helper()
	ctx := context.Background()
	if _, err := l.Target("a").Run(ctx, staleRouteCmd[0], staleRouteCmd[1:]...); err != nil {
		t.Fatalf("break endpoint route: %v", err)
	}
	// Some pings are dropped on purpose, so ping exits 1; the counter is what matters.
	_, _ = l.Target("r").Run(ctx, "ping", "-q", "-n", "-i", "0.002", "-c", "200", "198.51.100.2")
}

// addPeers adds n peers with fresh random keys to a node's WireGuard
// interface in one "wg addconf", allowed-ips 10.99.x.y/32.
func addPeers(t testing.TB, tg target.Target, iface string, n int) {
	t.Helper()
	var conf strings.Builder
	for i := range n {
		key, err := wgtypes.GeneratePrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&conf, "[Peer]\nPublicKey = %s\nAllowedIPs = 10.99.%d.%d/32\n\n", key.PublicKey(), i/250, i%250+1)
	}
	if _, err := tg.RunInput(context.Background(), []byte(conf.String()), "wg", "addconf", iface, "/dev/stdin"); err != nil {
		t.Fatalf("add %d peers: %v", n, err)
	}
}

// TestRecordFixtures refreshes testdata/exporter/*.json from real labs; it
// runs only with -update (as root).
func TestRecordFixtures(t *testing.T) {
	if !testutil.Update() {
		t.Skip("fixtures are recorded with -update")
	}
	l := labtest.Up(t, lab.Config{Name: "wgx0", Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 200}, ICMPLimit: 10})
	breakMultiWAN(t, l)
	// Traffic through the tunnel so peers carry byte counts and a handshake.
	if _, err := l.Target("a").Run(context.Background(), "ping", "-q", "-c", "3", "-i", "0.2", "10.77.0.2"); err != nil {
		t.Fatalf("ping across the tunnel: %v", err)
	}
	for _, node := range []string{"a", "b"} {
		snap, err := collect.Collect(context.Background(), l.Target(node), collect.Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join("..", "..", "testdata", "exporter", "multiwan-"+node+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := document.WriteSnapshot(f, snap); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
