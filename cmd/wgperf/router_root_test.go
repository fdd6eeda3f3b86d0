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
// OpenWrt-like router, reached over ssh to dropbear: the WireGuard endpoint
// route stuck on the backup uplink and banIP's ICMP limit eating replies are
// found, fixed through uci (network.IFACE.nohostroute=1 with ifdown/ifup,
// banip.global.ban_icmplimit=250 with a banIP restart), confirmed, and gone
// on the next diagnosis; each command used one ssh connection. With BusyBox
// alone the endpoint route cannot be recognised (no route protocols) and the
// diagnosis says why; ip-full is installed for the rest, as a user would.
func TestRouterMultiWANOverDropbear(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "rtfix", Topology: lab.MultiWAN, ICMPLimit: 25, Router: true})
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
	// 100 ICMP echoes a second on the primary uplink trip banIP's 25/s limit (not 250/s).
	if out, err := l.Target("r").Run(ctx, "ping", "-q", "-c", "100", "-i", "0.01", l.Node("a").UnderlayAddr); err != nil && !strings.Contains(string(out), "received") {
		t.Fatalf("ping burst: %v", err)
	}
	syns := labtest.SYNCounter(t, l, "a", lab.RouterSSHPort)
	t.Cleanup(func() {
		if t.Failed() { // what dropbear saw
			log, _ := os.ReadFile(filepath.Join(lab.StateDir, l.Config.Name, "a-dropbear.log"))
			t.Logf("dropbear log:\n%s", log)
		}
	})
	target.CloseAll()

	base := syns()
	ids := findingIDs(t, spec)
	if n := syns() - base; n != 1 {
		t.Errorf("diagnose over dropbear: %d ssh connections, want 1", n)
	}
	if !ids["icmp.ratelimit-drops"] || ids["route.stale-endpoint"] {
		t.Errorf("BusyBox only: findings %v, want icmp.ratelimit-drops and no route verdict", ids)
	}
	if _, out := runOut(t, "diagnose", "--host", spec); !strings.Contains(out, "opkg install ip-full") {
		t.Errorf("BusyBox only: diagnose does not say what is missing:\n%s", out)
	}

	if err := l.RouterInstall("ip-full"); err != nil {
		t.Fatal(err)
	}
	ids = findingIDs(t, spec)
	if !ids["route.stale-endpoint"] || !ids["icmp.ratelimit-drops"] {
		t.Fatalf("with ip-full: findings %v, want route.stale-endpoint and icmp.ratelimit-drops", ids)
	}
	base = syns()
	code, out := runOut(t, "fix", "--host", spec, "--apply", "--confirm", "60s")
	if code == exitFailed || !strings.Contains(out, "nohostroute") || !strings.Contains(out, "icmp.ratelimit-drops") {
		t.Fatalf("fix --apply: exit %d\n%s", code, out)
	}
	if n := syns() - base; n != 1 {
		t.Errorf("fix --apply over dropbear: %d ssh connections, want 1", n)
	}
	if code, out := runOut(t, "fix", "confirm", "--host", spec); code != exitOK {
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
	_, _ = l.Target("r").Run(ctx, "ping", "-q", "-c", "100", "-i", "0.01", l.Node("a").UnderlayAddr)
	time.Sleep(100 * time.Millisecond)
	ids = findingIDs(t, spec)
	if ids["route.stale-endpoint"] || ids["icmp.ratelimit-drops"] {
		t.Errorf("after the fix: findings %v", ids)
	}
	t.Logf("router %s (%s): fixed over dropbear", spec, wg)
}
