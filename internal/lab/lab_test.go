package lab_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// iperfMbit runs a short iperf3 from client to addr (a server must listen) and
// returns the received rate.
func iperfMbit(t *testing.T, client target.Target, addr string) float64 {
	t.Helper()
	out, err := client.Run(context.Background(), "iperf3", "-c", addr, "-t", "4", "-O", "1", "-J")
	if err != nil {
		t.Fatalf("iperf3 to %s: %v", addr, err)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iperf3 JSON: %v", err)
	}
	return res.End.SumReceived.BitsPerSecond / 1e6
}

func TestHealthySiteToSiteReachesUnderlayRate(t *testing.T) {
	testutil.RequireTools(t, "iperf3")
	cfg := labtest.Sized(t, lab.Config{Name: "lt1", Underlay: lab.Shape{RateMbit: 200}})
	l := labtest.Up(t, cfg)
	ctx := context.Background()
	srv, err := l.Target("b").Start(ctx, "iperf3", "-s")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(time.Second)
	time.Sleep(300 * time.Millisecond)

	underlay := iperfMbit(t, l.Target("a"), l.Node("b").UnderlayAddr)
	tunnel := iperfMbit(t, l.Target("a"), l.Node("b").TunnelAddr)
	ratio := tunnel / underlay
	t.Logf("underlay %.1f Mbit/s, tunnel %.1f Mbit/s, ratio %.3f", underlay, tunnel, ratio)
	if rate := float64(cfg.Underlay.RateMbit); underlay < 0.75*rate || underlay > 1.05*rate {
		t.Errorf("underlay %.1f Mbit/s, want about the %.0f Mbit/s tbf rate", underlay, rate)
	}
	if ratio < 0.9 {
		t.Errorf("tunnel/underlay = %.3f, want >= 0.9 on a healthy lab", ratio)
	}
}

func TestDownCleansUpAfterKill9(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "lt2"})
	ctx := context.Background()
	host := target.Local()
	for _, n := range []string{"a", "b"} {
		pid := l.Node(n).PID
		if pid == 0 {
			t.Fatalf("node %s has no pid", n)
		}
		if _, err := host.Run(ctx, "kill", "-9", strconv.Itoa(pid)); err != nil {
			t.Fatal(err)
		}
	}
	// Sockets stay behind after SIGKILL: Down must remove them.
	time.Sleep(100 * time.Millisecond)
	if err := lab.Down(ctx, "lt2"); err != nil {
		t.Fatal(err)
	}
	out, _ := host.Run(ctx, "ip", "netns", "list")
	if strings.Contains(string(out), lab.Prefix+"lt2-") {
		t.Errorf("namespaces left: %s", out)
	}
	if socks, _ := filepath.Glob("/var/run/wireguard/wg-lt2-*.sock"); len(socks) > 0 {
		t.Errorf("sockets left: %v", socks)
	}
	for _, n := range []string{"a", "b"} {
		if target.ProcessLive(l.Node(n).PID) {
			t.Errorf("node %s process %d still exists", n, l.Node(n).PID)
		}
	}
	if _, err := os.Stat(filepath.Join(lab.StateDir, "lt2")); err == nil {
		t.Error("state folder left")
	}
}

func TestUpTwiceIsAClearError(t *testing.T) {
	labtest.Up(t, lab.Config{Name: "lt3"})
	_, err := lab.Up(context.Background(), lab.Config{Name: "lt3"}, labtest.Binary(t))
	if err == nil || !strings.Contains(err.Error(), `lab "lt3" is already up`) {
		t.Fatalf("second up: err = %v, want already up", err)
	}
	// The failed second Up must not have torn down the first.
	if _, err := lab.Load("lt3"); err != nil {
		t.Errorf("first lab damaged: %v", err)
	}
}

func TestMultiWANRoutesAndTunnel(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "lt4", Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 100}})
	out, err := l.Target("a").Run(context.Background(), "ip", "route", "show", "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"via 198.51.100.1 dev eth0 metric 10", "via 192.0.2.1 dev eth1 metric 20"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("default routes %q lack %q", out, want)
		}
	}
	out, err = l.Target("a").Run(context.Background(), "ip", "route", "get", l.Node("b").UnderlayAddr)
	if err != nil || !strings.Contains(string(out), "dev eth0") {
		t.Errorf("endpoint route = %q, %v; want the primary uplink", out, err)
	}
}

func TestBadNamesAndTopologies(t *testing.T) {
	for _, cfg := range []lab.Config{{Name: "Bad_Name"}, {Name: "toolongname"}, {Name: "ok", Topology: "mesh"},
		{Name: "ok", ICMPLimit: 25, ICMPLimitStyle: "pf"}} {
		if _, err := lab.Up(context.Background(), cfg, "/nonexistent"); err == nil {
			t.Errorf("Up(%+v) succeeded", cfg)
		} else if cfg.ICMPLimitStyle != "" && !strings.Contains(err.Error(), "ICMP limit style") {
			t.Errorf("Up(%+v): %v, want the style refused", cfg, err)
		}
	}
}
