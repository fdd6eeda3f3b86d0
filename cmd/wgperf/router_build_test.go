package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestRouterBuild builds wgperf with -tags router: it must leave out the lab,
// its embedded WireGuard, net/http (the exporter serves with its own small
// server) and with it the TLS stack, and the Prometheus client libraries;
// keep the HTML report's charts (wgperf's own small SVG writer); say which
// build it is; answer a lab command and the exporter's --web.config.file in
// one line with exit status 3; and stay within 9.8 MB stripped for
// linux/mipsle softfloat, built as router-build.sh builds it (9,765,057
// bytes with Go 1.26.8. Doctor's report writing each probe's result from
// the probe list (reflect.StructOf) and collecting through the targets it
// holds added about 29 KB by router-size (doctor +20 KB, the rest a KB or
// two each): 9,633,985 before them, over 9.75 MB. The tunnel over each uplink with its trace, several
// clients at once, ECMP over a bond's own hash, the conntrack hash's fix,
// one remote shell a collection, the fix sequence's host and the catalog
// as a package of its own added about 188 KB by router-size (probe +63 KB,
// fix +28, remedy +27, exporter +25, target +25, doctor +21, fleet +10,
// cmd -73 as its code moved out): 9,437,377 before them, where 9.5 MB held.
// The tunnels that are not pairs (a hub found and its
// legs judged, NAT without keepalive, shared keys sampled through the bench,
// an unreachable tunnel explained), the layer table and the rank by what a
// cause explains, the bench's own flows' TCP state, the sweep's trade-off,
// the exporter's render budget and tunnel counts, the one here-document
// writer and the fixed PATH, bounded streams and inventories added about
// 460 KB by router-size (probe +103 KB, doctor +77, std slices' instances
// +57, check +36, remedy +30, exporter +21, parse +21): 8,978,625 before
// them. Each hop through hubs (bench and doctor --via: the
// hops' underlays, the hubs' CPU samples and quotas) and the probe list
// added about 51 KB by router-size (probe +34 KB, doctor +7, cmd +3) and
// crossed a 64 KiB segment: 8,913,089 before them. The shaper a tunnel outgrows (tc's qdiscs read,
// judged against the bench) and each uplink's round trip added about 27 KB
// by router-size (check +11 KB, parse +8, doctor +5, collect +2) and crossed
// a 64 KiB segment: 8,847,553 before them. mwan3 status and netifd's uptimes, the IPsec layer of
// the MTU check and bench's per-stream view crossed a 64 KiB segment:
// 8,782,017 before them, so the next addition is likely to need the budget
// looked at again. The throttled port's fix of both ends (the
// wg-listen-port and wg-peer-endpoint kinds, their persistence in wg-quick,
// uci and networkd, and doctor --fix's pair) added about 67 KB by
// router-size (remedy +54 KB, doctor +10, check +7, fix +4) and crossed a
// 64 KiB segment: 8,716,481 before it, 8,650,945 before the exporter's /sd
// and completion's ssh hosts. Latency under load and its SQM fix, CPU quota and
// steal, the throttled-port and one-way black hole probes, per-CPU
// interrupts and their affinity fix, bonds and the path's cycles added
// about 195 KB by router-size (probe +119 KB, check +57, remedy +35, std
// slices' instances +35, collect +26, target's kinds +26): 8,454,337
// before them. The charts added about 100 KB by router-size: 8,257,729
// before them. 8,126,657 before the fixes that resolve their persistence as
// each system's boot does (sysctl.d order, the nftables and iptables loaders,
// networkd and NetworkManager: +54 KB of remedy), the exporter's structured
// logs and shared read budget (+17 KB), the inventory's ssh option grammar
// and whole-inventory bounds; doctor's UDP-path, per-uplink, long-run and
// knee probes had added 160 KB to the 7.9 MB before them).
func TestRouterBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	deps, err := exec.Command("go", "list", "-tags", "router", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, left := range []string{"golang.zx2c4.com/wireguard/device", "github.com/wgperf/wgperf/internal/lab\n",
		"github.com/wgperf/wgperf/internal/scenario", "\nnet/http\n", "\ncrypto/tls\n", "github.com/prometheus/", "google.golang.org/protobuf", "go.yaml.in/yaml"} {
		if strings.Contains("\n"+string(deps)+"\n", left) {
			t.Errorf("the router build still links %s", strings.TrimSpace(left))
		}
	}
	bin := filepath.Join(t.TempDir(), "wgperf")
	if out, err := exec.Command("go", append(append([]string{"build", "-tags", "router"}, routerGCFlags(t)...), "-o", bin, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("go build -tags router: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "router build") {
		t.Errorf("version: %q (%v), want it to name the router build", out, err)
	}
	page := filepath.Join(t.TempDir(), "mtu.html")
	if out, err := exec.Command(bin, "report", "--from", filepath.Join("..", "..", "testdata", "report", "mtu.json"), "--html", page).CombinedOutput(); err != nil {
		t.Errorf("report --from mtu.json --html in the router build: %v\n%s", err, out)
	} else if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `<svg xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("the router build's report has no chart of the path-MTU search (%v)", err)
	}
	cmd := exec.Command(bin, "lab", "up")
	stderr, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailed ||
		strings.Count(string(stderr), "\n") != 1 || !strings.Contains(string(stderr), "not in the router build") {
		t.Errorf("lab up in the router build: %v, %q; want exit 3 and one line", err, stderr)
	}
	cmd = exec.Command(bin, "exporter", "--listen", "127.0.0.1:0", "--web.config.file", "/etc/wgperf/web-config.yml")
	stderr, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailed ||
		strings.Count(string(stderr), "\n") != 1 || !strings.Contains(string(stderr), "not in the router build") {
		t.Errorf("exporter --web.config.file in the router build: %v, %q; want exit 3 and one line", err, stderr)
	}
	help, err := exec.Command(bin, "exporter", "--help").Output()
	if err != nil || !strings.Contains(string(help), "This is the router build") || strings.Contains(string(help), "See deploy/web-config.yml") {
		t.Errorf("exporter --help in the router build does not say TLS is left out (%v):\n%s", err, help)
	}

	mipsle := filepath.Join(t.TempDir(), "wgperf-mipsle")
	args := append([]string{"build", "-trimpath", "-tags", "router"}, routerGCFlags(t)...)
	build := exec.Command("go", append(args, "-ldflags", "-s -w", "-o", mipsle, ".")...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=mipsle", "GOMIPS=softfloat")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags router for mipsle: %v\n%s", err, out)
	}
	fi, err := os.Stat(mipsle)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 9_800_000
	if fi.Size() > budget {
		t.Errorf("router build for mipsle softfloat: %d bytes, over its %d (see scripts/router-size.sh)", fi.Size(), budget)
	}
	t.Logf("router build, linux/mipsle softfloat, stripped: %d bytes", fi.Size())
}

// routerGCFlags are the router build's -gcflags, one per pattern of
// scripts/router-gcflags.
func routerGCFlags(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "router-gcflags"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, "-gcflags="+l+"=-l")
		}
	}
	if len(out) == 0 {
		t.Fatal("scripts/router-gcflags names no package")
	}
	return out
}

// TestRouterFlagsAgree: the OpenWrt packages' binaries (goreleaser's
// wgperf-router build) are built with the gcflags make router and
// TestRouterBuild use.
func TestRouterFlagsAgree(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Builds []struct {
			ID      string   `yaml:"id"`
			GCFlags []string `yaml:"gcflags"`
		} `yaml:"builds"`
	}
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range routerGCFlags(t) {
		want = append(want, strings.TrimPrefix(f, "-gcflags="))
	}
	found := false
	for _, bd := range conf.Builds {
		if bd.ID == "wgperf-router" {
			found = true
			if !slices.Equal(bd.GCFlags, want) {
				t.Errorf(".goreleaser.yaml's wgperf-router gcflags %q, want scripts/router-gcflags' %q", bd.GCFlags, want)
			}
		} else if len(bd.GCFlags) > 0 {
			t.Errorf("build %s has gcflags %q: only the router build leaves inlining out", bd.ID, bd.GCFlags)
		}
	}
	if !found {
		t.Error(".goreleaser.yaml has no wgperf-router build")
	}
}
