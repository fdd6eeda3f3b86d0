package exporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// seriesCount is how many samples a scrape holds.
func seriesCount(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	return n
}

// A lab tunnel taken down: the exporter watching its host keeps serving the
// host's interface and peer counts, now 0, where the interface's and its
// peers' own series vanish; the shipped rules, fed the two scrapes' counts,
// fire WgperfWireGuardTunnelGone. Before the counts, the host simply lost
// those series and no alert fired.
func TestTunnelGoneCountsGoToZero(t *testing.T) {
	testutil.RequireTools(t, "promtool")
	l := labtest.Up(t, lab.Config{Name: "dlvgone", Topology: lab.SiteToSite})
	url, p := startExporter(t, "netns:"+l.Netns("a"), 2*time.Second)
	before, err := fetch(url)
	if err != nil {
		t.Fatal(err)
	}
	ifaces, peers := sampleValue(t, before, "wgperf_wireguard_interfaces"), sampleValue(t, before, "wgperf_wireguard_peers")
	if ifaces != 1 || peers != 1 || !strings.Contains(before, `wgperf_wireguard_interface_info{`) {
		t.Fatalf("lab site a: %v interfaces, %v peers; want 1 and 1:\n%s", ifaces, peers, before)
	}

	// wg-quick down deletes the interface; so does this.
	if out, err := l.Target("a").Run(context.Background(), "ip", "link", "del", "dev", l.WGInterface("a")); err != nil {
		t.Fatalf("ip link del: %v: %s", err, out)
	}
	var after string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if after, err = fetch(url); err != nil {
			t.Fatalf("%v (exporter stderr: %s)", err, p.Stderr())
		}
		if !strings.Contains(after, "wgperf_wireguard_interfaces 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter still counts the deleted interface after a minute:\n%s", after)
		}
	}
	t.Logf("interface deleted: %d series before, %d after", seriesCount(before), seriesCount(after))
	for series, want := range map[string]float64{"wgperf_wireguard_interfaces": 0, "wgperf_wireguard_peers": 0, "wgperf_collect_success": 1} {
		if got := sampleValue(t, after, series); got != want {
			t.Errorf("after the interface was deleted: %s %v, want %v", series, got, want)
		}
	}
	for _, gone := range []string{"wgperf_wireguard_interface_info{", "wgperf_wireguard_peer_info{"} {
		if strings.Contains(after, gone) {
			t.Errorf("after the interface was deleted the exporter still serves %s...}", gone)
		}
	}

	// The shipped rules on what the exporter served: 5 minutes of the first
	// scrape's counts, then the second's.
	counts := func(name string) string {
		return fmt.Sprintf("%vx4 %vx10", sampleValue(t, before, name), sampleValue(t, after, name))
	}
	rules, err := filepath.Abs(filepath.Join(deployDir, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	labels := `{instance="lab-a:9723", job="wgperf"}`
	test := "rule_files: [" + rules + "]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" +
		"      - series: 'wgperf_wireguard_interfaces" + labels + "'\n        values: '" + counts("wgperf_wireguard_interfaces") + "'\n" +
		"      - series: 'wgperf_wireguard_peers" + labels + "'\n        values: '" + counts("wgperf_wireguard_peers") + "'\n" +
		"    alert_rule_test:\n" +
		"      - {eval_time: 4m, alertname: WgperfWireGuardTunnelGone, exp_alerts: []}\n" +
		"      - eval_time: 10m\n        alertname: WgperfWireGuardTunnelGone\n        exp_alerts:\n" +
		"          - exp_labels: {severity: critical, instance: lab-a:9723, job: wgperf}\n" +
		"            exp_annotations:\n" +
		"              summary: 'lab-a:9723: no WireGuard tunnel: the host has no WireGuard peer'\n" +
		"              description: 'wgperf collects lab-a:9723 but finds no WireGuard interface with a peer on it: wg-quick went down, the interface was deleted, or its peers were removed. Every per-peer alert (handshakes, endpoint routes) is silent while it is gone.'\n" +
		"              runbook_url: https://github.com/wgperf/wgperf/blob/main/docs/alerts.md#wgperfwireguardtunnelgone\n"
	path := filepath.Join(t.TempDir(), "tunnel_gone_test.yml")
	if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := target.Local().Run(context.Background(), "promtool", "test", "rules", path); err != nil {
		t.Errorf("promtool test rules on the lab's counts: %v\n%s\n%s", err, out, test)
	}
}
