package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// runOut runs the CLI in this process (so the lab's ssh settings apply) and
// returns its exit status and standard output.
func runOut(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(args, &out, os.Stderr)
	return code, out.String()
}

// findingIDs runs diagnose --json and returns the IDs it found.
func findingIDs(t *testing.T, spec string) map[string]bool {
	t.Helper()
	code, out := runOut(t, "diagnose", "--host", spec, "--json")
	if code == exitFailed {
		t.Fatalf("diagnose %s: exit %d\n%s", spec, code, out)
	}
	return idsOf(t, out)
}

// dropbearRun runs the CLI against the lab's router and returns its exit
// status, standard output and how many ssh connections reached dropbear.
type dropbearRun func(t *testing.T, args ...string) (code int, out string, conns int)

// countConnections runs commands while counting the SYNs that reach the
// router's dropbear, logging each command's connections and wall time.
func countConnections(t *testing.T, l *lab.Lab) dropbearRun {
	syns := labtest.SYNCounter(t, l, "a", lab.RouterSSHPort)
	t.Cleanup(func() {
		if t.Failed() { // what dropbear saw
			log, _ := os.ReadFile(filepath.Join(lab.StateDir, l.Config.Name, "a-dropbear.log"))
			t.Logf("dropbear log:\n%s", log)
		}
	})
	return func(t *testing.T, args ...string) (int, string, int) {
		t.Helper()
		target.CloseAll() // every command starts without a connection, as from a shell
		base, start := syns(), time.Now()
		code, out := runOut(t, args...)
		n := syns() - base
		t.Logf("over dropbear: wgperf %s: exit %d, %d ssh connection(s), %.1f s", strings.Join(args, " "), code, n, time.Since(start).Seconds())
		return code, out, n
	}
}

// idsOf reads the finding IDs of a diagnose --json document.
func idsOf(t *testing.T, out string) map[string]bool {
	t.Helper()
	var d struct {
		Findings []struct {
			ID string `json:"id"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("diagnose --json: %v\n%s", err, out)
	}
	ids := map[string]bool{}
	for _, f := range d.Findings {
		ids[f.ID] = true
	}
	return ids
}

// TestRouterMultiWANOverDropbear is the multi-WAN router case on the lab's
// OpenWrt-like router, reached over ssh to dropbear, with nothing but its
// default BusyBox userland (no ip-full): the WireGuard endpoint route stuck
// on the backup uplink is judged from BusyBox ip's text (no route protocols:
// by its gateway, and the finding says so), banIP's ICMP limit eating
// replies is found from the firewall counter and by icmp-burst, mtu finds
// the tunnel from BusyBox ip's addresses, and the fix goes through uci
// (network.IFACE.nohostroute=1 with ifdown/ifup, banip.global.ban_icmplimit=250
// with a banIP restart), is confirmed, and is gone on the next diagnosis.
// Every command uses one ssh connection.
func TestRouterMultiWANOverDropbear(t *testing.T) {
	// A 12 ms round trip to the endpoint, as to a real health-check target,
	// paces the one-shot pings to it and the next hop below even the raised
	// limit once both answer through the primary uplink. banIP's limit is
	// 10/s here (a default banIP has shipped; the case's router had 25/s).
	l := labtest.Up(t, lab.Config{Name: "rtfix", Topology: lab.MultiWAN, ICMPLimit: 10, Router: true,
		Underlay: lab.Shape{RateMbit: 100, DelayMs: 6}})
	spec := labtest.Router(t, l)
	t.Cleanup(target.CloseAll)
	ctx := context.Background()
	remote, err := target.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	sh := func(script string) string {
		t.Helper()
		out, err := remote.Run(ctx, "sh", "-c", script)
		if err != nil {
			t.Fatalf("on the router: %s: %v", script, err)
		}
		return string(out)
	}
	wg := l.WGInterface("a")
	endpoint := l.Node("b").UnderlayAddr
	// netifd's host route, made by "ifup" while the fiber was down.
	sh("ip route replace " + endpoint + " via 192.0.2.1 dev eth1 proto static metric 20")
	// 100 ICMP echoes a second on the primary uplink trip banIP's 10/s limit (not 250/s).
	burst := func() {
		t.Helper()
		if out, err := l.Target("r").Run(ctx, "ping", "-q", "-c", "100", "-i", "0.01", l.Node("a").UnderlayAddr); err != nil && !strings.Contains(string(out), "received") {
			t.Fatalf("ping burst: %v", err)
		}
	}
	burst()
	run := countConnections(t, l)
	one := func(what string, n int) {
		t.Helper()
		if n != 1 {
			t.Errorf("%s over dropbear: %d ssh connections, want 1", what, n)
		}
	}

	_, out, n := run(t, "diagnose", "--host", spec, "--json")
	one("diagnose", n)
	if ids := idsOf(t, out); !ids["icmp.ratelimit-drops"] || !ids["route.stale-endpoint"] {
		t.Errorf("BusyBox only: findings %v, want icmp.ratelimit-drops and route.stale-endpoint", ids)
	}
	if _, out := runOut(t, "diagnose", "--host", spec); !strings.Contains(out, "BusyBox ip prints no route protocols") || !strings.Contains(out, "opkg install ip-full") {
		t.Errorf("BusyBox only: diagnose does not say the route protocol was not seen:\n%s", out)
	}
	mwanTargets := "198.51.100.1," + endpoint // mwan3's track_ip: the next hop and the far endpoint
	// Before the fix the endpoint answers through the backup uplink, and its
	// round trip would pace the next hop's one-shot pings to about the limit
	// on a busy machine (about 14/s with six busy loops on two cores, by the
	// replies lost). The next hop alone answers without the lab's delay:
	// one-shot pings follow each other as fast as the router starts them
	// (about 16/s under that load), above 10/s, and the persistent ping's
	// 5/s stays below it. Each lost reply's one-second wait refills the
	// burst of 5, so the fifth loss comes near the 30th ping, idle or
	// loaded: 40 a mode.
	code, out, n := run(t, "icmp-burst", "--host", spec, "--targets", "198.51.100.1", "--count", "40")
	one("icmp-burst", n)
	if code != exitWarning {
		t.Errorf("icmp-burst before the fix: exit %d, want %d (rate limiter found):\n%s", code, exitWarning, out)
	} else {
		t.Logf("icmp-burst before the fix:\n%s", out)
	}
	// doctor from the router's end alone: every check, icmp-burst to the
	// health-check targets it found, a DF search to the endpoint; the stuck
	// route explains the most throughput and comes first.
	code, out, n = run(t, "doctor", "--client", spec, "--json")
	one("doctor", n)
	var dr struct {
		Status string `json:"status"`
		Causes []struct {
			Finding struct {
				ID string `json:"id"`
			} `json:"finding"`
		} `json:"causes"`
		Probes []struct {
			Probe string `json:"probe"`
		} `json:"probes"`
	}
	if err := json.Unmarshal([]byte(out), &dr); err != nil || len(dr.Causes) == 0 || dr.Causes[0].Finding.ID != "route.stale-endpoint" || code != exitCritical {
		t.Errorf("doctor over dropbear: exit %d, %+v (%v); want route.stale-endpoint first, exit %d:\n%.3000s", code, dr, err, exitCritical, out)
	}
	t.Logf("doctor over dropbear: status %s, causes %+v, probes %+v", dr.Status, dr.Causes, dr.Probes)
	code, out, n = run(t, "mtu", "--client", spec, "--server", "netns:"+l.Netns("b"))
	one("mtu", n)
	if code != exitOK || !strings.Contains(out, "1500") {
		t.Errorf("mtu from the router: exit %d:\n%s", code, out)
	}

	code, out, n = run(t, "fix", "--host", spec, "--apply", "--confirm", "60s")
	one("fix --apply", n)
	if code == exitFailed || !strings.Contains(out, "nohostroute") || !strings.Contains(out, "icmp.ratelimit-drops") {
		t.Fatalf("fix --apply: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "fix", "confirm", "--host", spec); code != exitOK {
		t.Fatalf("fix confirm: exit %d\n%s", code, out)
	}
	// The changes are in the router's uci files, and netifd's route is gone.
	network, err := os.ReadFile(filepath.Join(l.RouterDir(), "root/etc/config/network"))
	if err != nil || !strings.Contains(string(network), "option nohostroute '1'") {
		t.Errorf("/etc/config/network after the fix:\n%s (%v)", network, err)
	}
	if got := strings.TrimSpace(sh("uci get banip.global.ban_icmplimit")); got != "250" {
		t.Errorf("ban_icmplimit = %q, want 250", got)
	}
	if got := sh("ip route show " + endpoint); strings.TrimSpace(got) != "" {
		t.Errorf("host route to the endpoint still there: %s", got)
	}
	if got := sh("ip route get " + endpoint); !strings.Contains(got, "dev eth0") {
		t.Errorf("endpoint not via the primary uplink: %s", got)
	}
	// Under the same burst, the new limit drops nothing.
	burst()
	time.Sleep(100 * time.Millisecond)
	_, out, _ = run(t, "diagnose", "--host", spec, "--json")
	if ids := idsOf(t, out); ids["route.stale-endpoint"] || ids["icmp.ratelimit-drops"] {
		t.Errorf("after the fix: findings %v", ids)
	}
	if code, out, _ := run(t, "icmp-burst", "--host", spec, "--targets", mwanTargets, "--count", "10"); code != exitOK {
		t.Errorf("icmp-burst after the fix: exit %d, want %d:\n%s", code, exitOK, out)
	}
	// With ip-full the router answers in JSON, and the diagnosis agrees.
	if err := l.RouterInstall("ip-full"); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := run(t, "diagnose", "--host", spec, "--json"); len(idsOf(t, out)) != len(findingIDs(t, "netns:"+l.Netns("a"))) {
		t.Errorf("with ip-full: findings %v, the namespace's %v", idsOf(t, out), findingIDs(t, "netns:"+l.Netns("a")))
	}
	t.Logf("router %s (%s): fixed over dropbear", spec, wg)
}

// TestRouterBusyBoxProbesOverDropbear runs the probes from and to the lab's
// OpenWrt-like router over dropbear, its ip BusyBox's (no ip-full): bench
// first stops in one line naming the opkg package it lacks; with iperf3
// installed, mtu finds the black-holed 1400-byte hop with BusyBox
// traceroute -F and steps the MSS through the tunnel, and bench measures,
// both finding the router's tunnel and endpoint addresses from BusyBox ip's
// text. Each command uses one ssh connection.
func TestRouterBusyBoxProbesOverDropbear(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "rtprb", Topology: lab.SiteToSite, Router: true, PathMTU: 1400, DropFragNeeded: true,
		Underlay: lab.Shape{RateMbit: 100}})
	spec := labtest.Router(t, l)
	t.Cleanup(target.CloseAll)
	run := countConnections(t, l)
	server := "netns:" + l.Netns("b")

	var stderr bytes.Buffer
	code := run2(t, &stderr, "bench", "--client", server, "--server", spec, "--quick")
	if msg := stderr.String(); code != exitFailed || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "opkg install iperf3") {
		t.Errorf("bench to a router without iperf3: exit %d, %q; want exit 3 and one line naming opkg install iperf3", code, msg)
	}
	// Without iperf3 the DF search still proves the black hole; the MSS
	// stepping it would add says why it did not run.
	code, out, _ := run(t, "mtu", "--client", spec, "--server", server)
	if code != exitCritical || !strings.Contains(out, "path MTU to "+l.Node("b").UnderlayAddr+": 1400 bytes") ||
		!strings.Contains(out, "MSS stepping through the tunnel did not run: iperf3 is not installed") {
		t.Errorf("mtu from a router without iperf3: exit %d:\n%s", code, out)
	}
	if err := l.RouterInstall("iperf3"); err != nil {
		t.Fatal(err)
	}

	code, out, n := run(t, "mtu", "--client", spec, "--server", server, "--json")
	var m struct {
		PathMTU   int    `json:"path_mtu"`
		Method    string `json:"method"`
		BlackHole bool   `json:"black_hole"`
		Probes    []any  `json:"probes"`
		MSSRuns   []any  `json:"mss_runs"`
		Seconds   float64
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.PathMTU != 1400 || !m.BlackHole || n != 1 {
		t.Errorf("mtu from the router: exit %d, %d ssh connections, %+v (%v):\n%s", code, n, m, err, out)
	}
	t.Logf("mtu from the router: path MTU %d by %s, %d DF probes, %d MSS runs", m.PathMTU, m.Method, len(m.Probes), len(m.MSSRuns))

	code, out, n = run(t, "bench", "--client", server, "--server", spec, "--quick", "--json")
	if code == exitFailed || n != 1 || !json.Valid([]byte(out)) {
		t.Fatalf("bench to the router with iperf3: exit %d, %d ssh connections:\n%.3000s", code, n, out)
	}
	if !strings.Contains(out, `"`+l.Node("a").TunnelAddr+`"`) || !strings.Contains(out, `"`+l.Node("a").UnderlayAddr+`"`) {
		t.Errorf("bench did not find the router's tunnel %s and endpoint %s:\n%.3000s", l.Node("a").TunnelAddr, l.Node("a").UnderlayAddr, out)
	}
}

// run2 runs the CLI in this process and returns its exit status, its standard
// error going to stderr.
func run2(t *testing.T, stderr *bytes.Buffer, args ...string) int {
	t.Helper()
	var out bytes.Buffer
	return run(args, &out, stderr)
}
