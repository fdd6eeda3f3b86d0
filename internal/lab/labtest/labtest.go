// Package labtest gives root tests a real lab in one call: it builds the wgperf
// binary the WireGuard nodes run, brings the lab up and tears it down when the
// test ends (pass or fail).
package labtest

import (
	"context"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/sizing"
	"github.com/wgperf/wgperf/internal/testutil"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// BinaryEnv names a prebuilt wgperf binary for the tests to use instead of
// building one per test package (make test sets it).
const BinaryEnv = "WGPERF_TEST_BINARY"

// Binary returns the wgperf binary lab nodes run: $WGPERF_TEST_BINARY, or
// cmd/wgperf built once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(BinaryEnv); p != "" {
		return p
	}
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		dir, err := os.MkdirTemp("", "wgperf-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "wgperf")
		// The test binary may not be in the module root; build from it explicitly.
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/wgperf")
		cmd.Dir = root
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build wgperf: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// Up builds a lab for the test (root and the lab's tools required) and removes
// it in t.Cleanup.
func Up(t testing.TB, cfg lab.Config) *lab.Lab {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "tc", "nft", "wg", "ping")
	exe := Binary(t)
	atNodePriority(t)
	// A lab left by a crashed earlier run of the same test would block Up.
	_ = lab.Down(context.Background(), cfg.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, cfg, exe)
	t.Cleanup(func() {
		if err := lab.Down(context.Background(), cfg.Name); err != nil {
			t.Errorf("lab down %s: %v", cfg.Name, err)
		}
	})
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	return l
}

var capacities sizing.Capacities

// Sized returns cfg with its underlay shaped to what a healthy tunnel of the
// same shape carries on this machine (package sizing; measured once per test
// process and shape), for tests that judge the tunnel against the underlay.
// The backup uplink keeps its ratio to the primary. A machine too slow for
// the case skips the test.
func Sized(t testing.TB, cfg lab.Config) lab.Config {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "tc", "nft", "wg", "iperf3")
	atNodePriority(t)
	capLab := capacityLab()
	_ = lab.Down(context.Background(), capLab)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	topo := cfg.Topology
	if topo == "" {
		topo = lab.SiteToSite
	}
	capacity, err := capacities.Measure(ctx, sizing.Shape{WireGuard: cfg.WireGuard, Topology: topo, DelayMs: cfg.Underlay.DelayMs, Streams: 1}, Binary(t), capLab, 2)
	if err != nil {
		t.Fatalf("sizing the lab: %v", err)
	}
	s := sizing.Size(cfg.Underlay.RateMbit, capacity, 1).Held(HoldMbit(t))
	if s.Skip != "" {
		t.Skip(s.Skip)
	}
	t.Logf("sizing: %s", s)
	if cfg.Backup.RateMbit > 0 {
		cfg.Backup.RateMbit = max(1, cfg.Backup.RateMbit*s.RateMbit/cfg.Underlay.RateMbit)
	}
	cfg.Underlay.RateMbit = s.RateMbit
	return cfg
}

// capacityLab names the lab Sized measures in, one per test package: go test
// runs a package's tests in its folder, one at a time, while make test plays
// packages side by side, and a lab is torn down before it is built. One
// shared name had one package's sizing kill another's iperf3 mid-measurement
// ("signal: killed").
func capacityLab() string {
	dir, _ := os.Getwd()
	return capacityLabIn(dir)
}

// capacityLabIn is the capacity lab's name for the package in dir.
func capacityLabIn(dir string) string {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return "cap" + strconv.FormatUint(uint64(h.Sum32()%(36*36*36*36*36)), 36) // at most 8 of [a-z0-9]
}

// HoldEnv holds sized labs at most this many Mbit/s: make test sets it where
// several streams of lab tests share the machine (sizing.Sizing.Held).
const HoldEnv = "WGPERF_LAB_HOLD_MBIT"

// HoldMbit is the ceiling HoldEnv sets, 0 for none.
func HoldMbit(t testing.TB) int {
	t.Helper()
	v := os.Getenv(HoldEnv)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < sizing.MinRateMbit {
		t.Fatalf("%s=%q: want a rate in Mbit/s, at least %d", HoldEnv, v, sizing.MinRateMbit)
	}
	return n
}

// atNodePriority runs the test process at the lab nodes' priority: what the
// test runs on the nodes (iperf3, ping) goes first like the nodes, whatever
// else shares the test's session.
func atNodePriority(t testing.TB) {
	t.Helper()
	if err := lab.RaiseToNodePriority(); err != nil {
		t.Fatalf("lab priority: %v", err)
	}
}
