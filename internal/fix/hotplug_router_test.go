package fix_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// TestEndpointHotplugOnBusyBoxRouter: a full tunnel keeps its endpoint's
// host route against the loop, so on the lab's OpenWrt-like router with two
// uplinks (BusyBox only, over dropbear) re-pointing it installs the hotplug
// script that keeps it right, listed for sysupgrade. Fired the way
// hotplug-call fires /etc/hotplug.d/iface, with BusyBox's ash, ip, awk and
// sort, the script moves the route to the backup when the fiber goes down
// (netifd's ifdown, its default route gone) and back at its ifup, and off an
// uplink mwan3 finds disconnected while its route stays; the rollback
// removes the script and the sysupgrade line.
func TestEndpointHotplugOnBusyBoxRouter(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "trhp", Topology: lab.MultiWAN, Router: true})
	remote, err := target.Parse(labtest.Router(t, l))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh := func(script string) string {
		t.Helper()
		out, err := remote.Run(ctx, "sh", "-c", script)
		if err != nil {
			t.Fatalf("on the router: %s: %v: %s", script, err, out)
		}
		return string(out)
	}
	endpoint := l.Node("b").UnderlayAddr
	// netifd's host route, made while the fiber was down: on the backup.
	sh("ip route replace " + endpoint + " via 192.0.2.1 dev eth1 proto static metric 20")
	env, err := fix.Detect(ctx, remote, "/")
	if err != nil || env.Platform != remedy.OpenWrt {
		t.Fatalf("platform %v (%v), want openwrt", env, err)
	}
	r, err := remedy.RouteRepoint(endpoint, remedy.Route{Via: "198.51.100.1", Dev: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	f := finding.Finding{ID: "route.stale-endpoint", Severity: finding.Critical, Title: "t", Host: target.Of(remote),
		Fixes: []finding.Fix{remedy.Fix("re-point it", r)}}
	plan, err := fix.PlanFindings(ctx, env, []finding.Finding{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fix.Apply(ctx, env, plan, fix.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	script := "/etc/hotplug.d/iface/95-wgperf-endpoint-" + strings.ReplaceAll(endpoint, ".", "-")
	etc := filepath.Join(l.RouterDir(), "root")
	if _, err := os.Stat(filepath.Join(etc, script)); err != nil {
		t.Fatalf("the hotplug script: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(etc, "/etc/sysupgrade.conf")); err != nil || !strings.Contains(string(b), script+"\n") {
		t.Errorf("sysupgrade.conf does not keep the script: %q (%v)", b, err)
	}
	via := func() string {
		t.Helper()
		out := sh("ip route get " + endpoint)
		for _, dev := range []string{"eth0", "eth1"} {
			if strings.Contains(out, "dev "+dev) {
				return dev
			}
		}
		t.Fatalf("ip route get %s: %s", endpoint, out)
		return ""
	}
	if got := via(); got != "eth0" {
		t.Fatalf("after the fix the endpoint goes via %s, want eth0", got)
	}
	// hotplug-call sources each script in a subshell with the event's variables.
	event := func(action, device string) {
		t.Helper()
		sh("export ACTION=" + action + " INTERFACE=wan DEVICE=" + device + "; for s in /etc/hotplug.d/iface/*; do (. \"$s\"); done")
	}
	for _, step := range []struct {
		what, before, action, device, want string
	}{
		{"the fiber goes down", "ip route del default via 198.51.100.1 dev eth0", "ifdown", "", "eth1"},
		{"the fiber is back", "ip route add default via 198.51.100.1 dev eth0 metric 10", "ifup", "eth0", "eth0"},
		{"mwan3 finds the fiber disconnected, its route still there", "", "disconnected", "eth0", "eth1"},
		{"mwan3 finds it connected again", "", "connected", "eth0", "eth0"},
		{"another event (an address update) moves nothing", "", "ifupdate", "eth1", "eth0"},
	} {
		if step.before != "" {
			sh(step.before)
		}
		event(step.action, step.device)
		if got := via(); got != step.want {
			t.Errorf("%s (%s): the endpoint goes via %s, want %s", step.what, step.action, got, step.want)
		}
	}
	if _, err := fix.Rollback(ctx, env); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(etc, script)); !os.IsNotExist(err) {
		t.Errorf("the hotplug script after the rollback: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(etc, "/etc/sysupgrade.conf")); strings.Contains(string(b), script) {
		t.Errorf("sysupgrade.conf still keeps the script after the rollback: %q", b)
	}
	if got := via(); got != "eth1" {
		t.Errorf("after the rollback the endpoint goes via %s, want the backup it was stuck on", got)
	}
}
