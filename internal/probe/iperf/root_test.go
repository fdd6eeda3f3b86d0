package iperf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// twoNamespaces joins wgb-it-a (192.0.2.1) and wgb-it-b (192.0.2.2) with a veth.
func twoNamespaces(t *testing.T) (a, b target.Target) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "iperf3")
	ctx := context.Background()
	suffix := fmt.Sprint(os.Getpid() % 100000)
	na, nb := "wgb-it-a"+suffix, "wgb-it-b"+suffix
	host := target.Local()
	t.Cleanup(func() {
		_, _ = host.Run(ctx, "ip", "netns", "del", na)
		_, _ = host.Run(ctx, "ip", "netns", "del", nb)
	})
	for _, argv := range [][]string{
		{"ip", "netns", "add", na}, {"ip", "netns", "add", nb},
		{"ip", "link", "add", "wgbit" + suffix, "netns", na, "type", "veth", "peer", "name", "wgbit" + suffix, "netns", nb},
		{"ip", "-n", na, "addr", "add", "192.0.2.1/24", "dev", "wgbit" + suffix},
		{"ip", "-n", nb, "addr", "add", "192.0.2.2/24", "dev", "wgbit" + suffix},
		{"ip", "-n", na, "link", "set", "dev", "wgbit" + suffix, "up"},
		{"ip", "-n", nb, "link", "set", "dev", "wgbit" + suffix, "up"},
		{"ip", "-n", na, "link", "set", "dev", "lo", "up"},
		{"ip", "-n", nb, "link", "set", "dev", "lo", "up"},
	} {
		if _, err := host.Run(ctx, argv[0], argv[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	return target.Netns(na), target.Netns(nb)
}

func TestRunAndErrors(t *testing.T) {
	a, b := twoNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	res, err := Run(ctx, a, b, Test{Addr: "192.0.2.2", Seconds: 1, Reverse: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reverse || res.Mbit() <= 0 || len(res.Intervals) == 0 || len(res.Intervals[0].Cwnd) != 1 {
		t.Errorf("reverse run %+v: want the server's cwnd", res)
	}

	// A second server on a busy port fails with a clear line.
	srv, err := StartServer(ctx, b, 5297, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if _, err := StartServer(ctx, b, 5297, 10); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("busy port: err = %v", err)
	}
	srv.Stop()

	// Nobody answers at this address.
	_, err = Run(ctx, a, b, Test{Addr: "192.0.2.99", Seconds: 1})
	if err == nil || !strings.Contains(err.Error(), "wgperf diagnose") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unreachable server: err = %v", err)
	}
}

// A target without iperf3 gets the one line that says how to install it.
func TestCheckMissing(t *testing.T) {
	err := Check(context.Background(), targettest.New("ssh:router"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install iperf3") || !strings.Contains(err.Error(), "opkg install iperf3") {
		t.Errorf("err = %v", err)
	}
}

// iperf3 opens a UDP test with a datagram each way, sent once: B's firewall
// drops the first client datagram of 4 bytes (udp length 12) to the port, as
// a lossy path may. The stalled start is tried again with a fresh server and
// goes through; where every start is dropped, the run fails as stalled after
// two, and says why.
func TestUDPStartLost(t *testing.T) {
	testutil.RequireTools(t, "nft")
	a, b := twoNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	drop := func(quota string) {
		t.Helper()
		if _, err := b.Run(ctx, "nft", "flush ruleset; add table inet t; add chain inet t in { type filter hook input priority 0; }; add rule inet t in udp dport 5296 udp length 12 "+quota+" counter drop"); err != nil {
			t.Fatal(err)
		}
	}
	dropped := func() string {
		out, err := b.Run(ctx, "nft", "list", "chain", "inet", "t", "in")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	test := Test{Addr: "192.0.2.2", Port: 5296, Seconds: 1, UDPMbit: 5, Timeout: 5 * time.Second}

	drop("quota until 40 bytes") // the first start only (32 bytes an IPv4 packet)
	res, err := Run(ctx, a, b, test)
	if err != nil || res.Mbit() <= 0 {
		t.Fatalf("one start lost: %v", err)
	}
	if !strings.Contains(dropped(), "packets 1 ") {
		t.Errorf("the first start was not dropped, so nothing was tried again:\n%s", dropped())
	}

	drop("")
	_, err = Run(ctx, a, b, test)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "never resends") || !strings.Contains(err.Error(), "port 5296") {
		t.Errorf("every start lost: err = %v", err)
	}
	if !strings.Contains(dropped(), "packets 2 ") {
		t.Errorf("want two starts dropped:\n%s", dropped())
	}
}
