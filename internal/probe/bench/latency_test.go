package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// latencyFile reads a ping or route output recorded in the lab.
func latencyFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "latency", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func pingFile(t *testing.T, name string) *RTT {
	t.Helper()
	r, err := ParsePing(strings.NewReader(latencyFile(t, name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// Pings recorded between two lab namespaces (iputils and BusyBox, idle
// through wireguard-go; and an address in the tunnel's subnet nobody has).
func TestParsePing(t *testing.T) {
	for _, tt := range []struct {
		file string
		want RTT
	}{
		{"idle-tunnel.txt", RTT{Sent: 10, Received: 10, MinMs: 0.512, MedianMs: (0.596 + 0.617) / 2, P90Ms: 0.7, MaxMs: 1.45}},
		{"busybox-idle-tunnel.txt", RTT{Sent: 5, Received: 5, MinMs: 0.494, MedianMs: 0.576, P90Ms: 1.182, MaxMs: 1.182}},
		{"no-reply.txt", RTT{Sent: 5}},
	} {
		if d := cmp.Diff(tt.want, *pingFile(t, tt.file)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.file, d)
		}
	}
	if _, err := ParsePing(strings.NewReader("ping: connect: Network is unreachable\n")); err == nil {
		t.Error("an error message parsed as a series")
	}
	dup := "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=1.0 ms\n64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=9.0 ms (DUP!)\n"
	if r, err := ParsePing(strings.NewReader(dup)); err != nil || r.Received != 1 || r.MaxMs != 1.0 || r.Sent != 1 {
		t.Errorf("a duplicate counted: %+v %v", r, err)
	}
}

func TestRTTString(t *testing.T) {
	if got := pingFile(t, "idle-tunnel.txt").String(); got != "0.51/0.61/0.70/1.45 ms" {
		t.Errorf("idle: %q", got)
	}
	if got := (&RTT{Sent: 20, Received: 18, MinMs: 2, MedianMs: 212.4, P90Ms: 230, MaxMs: 241}).String(); got != "2.00/212/230/241 ms (2 of 20 lost)" {
		t.Errorf("loaded: %q", got)
	}
	if got := pingFile(t, "no-reply.txt").String(); got != "no reply to 5" {
		t.Errorf("no reply: %q", got)
	}
}

// "ip -o route get" recorded on both lab ends: each one's way to the other's underlay address.
func TestParseRouteGet(t *testing.T) {
	for _, tt := range []struct{ file, dev, src string }{
		{"route-get-a.txt", "eth0", "198.51.100.2"},
		{"route-get-b.txt", "eth0", "203.0.113.2"},
	} {
		dev, src := ParseRouteGet(latencyFile(t, tt.file))
		if dev != tt.dev || src != tt.src {
			t.Errorf("%s: dev %q src %q, want %q %q", tt.file, dev, src, tt.dev, tt.src)
		}
	}
	if dev, src := ParseRouteGet("10.0.0.1 dev -oProxyCommand=x src not-an-ip"); dev != "" || src != "" {
		t.Errorf("foreign text accepted: %q %q", dev, src)
	}
}

func TestLoadedPingsFitTheRun(t *testing.T) {
	for seconds, want := range map[int]int{1: 3, 3: 10, 10: 45} {
		if got := LoadedPings(seconds); got != want {
			t.Errorf("LoadedPings(%d) = %d, want %d", seconds, got, want)
		}
	}
}
