package collect

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// rootNetns builds two namespaces joined by a veth pair: "host" (the one
// collected) with MTU 1380, a default route, a proto static host route, and an
// nftables ICMP limit rule counting into a named counter; "peer" pings it.
func rootNetns(t *testing.T) (host, peer string) {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "nft", "ping")
	ctx := context.Background()
	id := fmt.Sprintf("%d", os.Getpid()%100000)
	host, peer = "wgc-h"+id, "wgc-p"+id
	local := target.Local()
	run := func(args ...string) {
		t.Helper()
		if out, err := local.Run(ctx, args[0], args[1:]...); err != nil {
			t.Fatalf("%s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		_, _ = local.Run(ctx, "ip", "netns", "del", host)
		_, _ = local.Run(ctx, "ip", "netns", "del", peer)
	})
	run("ip", "netns", "add", host)
	run("ip", "netns", "add", peer)
	run("ip", "-n", host, "link", "add", "wgc-up0", "type", "veth", "peer", "name", "wgc-pp0", "netns", peer)
	run("ip", "-n", host, "link", "set", "dev", "wgc-up0", "mtu", "1380", "up")
	run("ip", "-n", peer, "link", "set", "dev", "wgc-pp0", "mtu", "1380", "up")
	run("ip", "-n", host, "addr", "add", "198.51.100.2/24", "dev", "wgc-up0")
	run("ip", "-n", peer, "addr", "add", "198.51.100.1/24", "dev", "wgc-pp0")
	run("ip", "-n", host, "route", "add", "default", "via", "198.51.100.1", "metric", "10")
	run("ip", "-n", host, "route", "add", "46.38.233.77", "via", "198.51.100.1", "dev", "wgc-up0", "proto", "static", "metric", "20")
	ruleset := `table inet wgc_test {
	counter cnt_icmpflood { }
	chain pre {
		type filter hook prerouting priority -150; policy accept;
		iifname "wgc-up0" meta l4proto icmp limit rate over 5/second burst 2 packets counter name "cnt_icmpflood" drop
	}
}
`
	if out, err := target.Netns(host).RunInput(ctx, []byte(ruleset), "nft", "-f", "-"); err != nil {
		t.Fatalf("nft -f: %v %s", err, out)
	}
	// A fast burst of echo requests: the limiter lets a few through and counts the rest.
	_, _ = target.Netns(peer).Run(ctx, "ping", "-c", "30", "-i", "0.002", "-W", "1", "-q", "198.51.100.2")
	return host, peer
}

func TestCollectNetns(t *testing.T) {
	host, _ := rootNetns(t)
	snap, err := Collect(context.Background(), target.Netns(host), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Host.String() != "netns:"+host || snap.SchemaVersion != facts.SchemaVersion || snap.System.Kernel == "" || snap.System.CPUs < 1 {
		t.Errorf("header = %q %d %+v", snap.Host, snap.SchemaVersion, snap.System)
	}
	var veth *facts.Link
	for i := range snap.Links {
		if snap.Links[i].Name == "wgc-up0" {
			veth = &snap.Links[i]
		}
	}
	if veth == nil || veth.MTU != 1380 || veth.Kind != "veth" || veth.State != "UP" {
		t.Fatalf("veth wgc-up0 = %+v, want MTU 1380, kind veth, UP", veth)
	}
	if _, ok := veth.Offloads["generic-receive-offload"]; !ok {
		t.Errorf("wgc-up0 offloads = %v, want GRO reported (ethtool)", veth.Offloads)
	}
	if veth.RPSCPUs["rx-0"] == "" {
		t.Errorf("wgc-up0 rps_cpus = %v, want rx-0", veth.RPSCPUs)
	}

	var static, def bool
	for _, r := range snap.Routes {
		if r.Dst == "46.38.233.77" && r.Protocol == "static" && r.Gateway == "198.51.100.1" && r.Metric == 20 && r.Table == "main" {
			static = true
		}
		if r.Dst == "default" && r.Metric == 10 && r.Dev == "wgc-up0" {
			def = true
		}
	}
	if !static || !def {
		t.Errorf("static host route found=%v, default route metric 10 found=%v in %+v", static, def, snap.Routes)
	}

	var limit *facts.FirewallRule
	for i, r := range snap.Firewall.Rules {
		if r.Table == "wgc_test" && r.Limit != nil {
			limit = &snap.Firewall.Rules[i]
		}
	}
	if limit == nil {
		t.Fatalf("nft limit rule missing from %+v", snap.Firewall.Rules)
	}
	if limit.IIf != "wgc-up0" || limit.Protocol != "icmp" || !limit.Limit.Over || limit.Limit.Rate != 5 ||
		limit.Limit.Burst != 2 || limit.CounterName != "cnt_icmpflood" || limit.Verdict != "drop" || limit.Hook != "prerouting" {
		t.Errorf("limit rule = %+v limit %+v", limit, limit.Limit)
	}
	if limit.Packets == 0 {
		t.Errorf("limit rule counter = 0 packets, want the dropped part of the ping burst")
	}
	if !strings.Contains(limit.Text, "limit rate over 5/second") {
		t.Errorf("rule text = %q", limit.Text)
	}
	if len(snap.Counters.SNMP["Icmp"]) == 0 || len(snap.Softnet) == 0 || len(snap.CPU) < 2 {
		t.Errorf("counters missing: snmp %d, softnet %d, cpu %d", len(snap.Counters.SNMP), len(snap.Softnet), len(snap.CPU))
	}
	if snap.Sysctls["net.ipv4.tcp_congestion_control"] == "" {
		t.Errorf("sysctls = %v, want tcp_congestion_control", snap.Sysctls)
	}
	if snap.OpenWrt != nil {
		t.Errorf("OpenWrt = %+v on Debian", snap.OpenWrt)
	}

	// The snapshot survives a write/read round trip.
	var buf bytes.Buffer
	if err := document.WriteSnapshot(&buf, snap); err != nil {
		t.Fatal(err)
	}
	back, err := document.ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Host.Same(snap.Host) || len(back.Firewall.Rules) != len(snap.Firewall.Rules) || !back.CollectedAt.Equal(snap.CollectedAt) {
		t.Errorf("round trip changed the snapshot")
	}
}

func TestCollectUnreachable(t *testing.T) {
	testutil.RequireRoot(t)
	_, err := Collect(context.Background(), target.Netns("wgc-does-not-exist"), Options{Timeout: 5 * time.Second})
	if err == nil || !strings.HasPrefix(err.Error(), "netns:wgc-does-not-exist: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the target", err)
	}
}

func BenchmarkCollectLocal(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := Collect(ctx, target.Local(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
