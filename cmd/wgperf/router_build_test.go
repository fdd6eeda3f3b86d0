package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRouterBuild builds wgperf with -tags router: it must leave out the lab,
// its embedded WireGuard and the charts (most of the binary), say which
// build it is, and answer a lab command in one line with exit status 3.
func TestRouterBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	deps, err := exec.Command("go", "list", "-tags", "router", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, left := range []string{"gonum.org/v1/plot", "golang.zx2c4.com/wireguard/device", "github.com/wgperf/wgperf/internal/lab\n", "github.com/wgperf/wgperf/internal/scenario"} {
		if strings.Contains(string(deps)+"\n", left) {
			t.Errorf("the router build still links %s", strings.TrimSpace(left))
		}
	}
	bin := filepath.Join(t.TempDir(), "wgperf")
	if out, err := exec.Command("go", "build", "-tags", "router", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags router: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "router build") {
		t.Errorf("version: %q (%v), want it to name the router build", out, err)
	}
	cmd := exec.Command(bin, "lab", "up")
	stderr, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailed ||
		strings.Count(string(stderr), "\n") != 1 || !strings.Contains(string(stderr), "not in the router build") {
		t.Errorf("lab up in the router build: %v, %q; want exit 3 and one line", err, stderr)
	}
}
