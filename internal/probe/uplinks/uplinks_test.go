package uplinks

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// Traces recorded in the multi-WAN lab from A to B's endpoint: the backup
// uplink's gateway answers from the carrier's shared space (100.64.0.1),
// the fiber's from its own; one with R's time-exceeded dropped.
func TestParseTraceroute(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"uplink-cgnat.txt", "100.64.0.1 (CGNAT) → 203.0.113.2"},
		{"uplink-fiber.txt", "198.51.100.1 → 203.0.113.2"},
		{"uplink-silent-hop.txt", "* → 203.0.113.2"},
		{"hops.txt", "198.51.100.1 → 203.0.113.2"},
		// A DF probe that met a narrower hop: the hops it passed still count.
		{"frag-needed.txt", "198.51.100.1"},
	} {
		hops, err := ParseTraceroute(testutil.OpenTestdata(t, "probe", "traceroute", tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := HopsText(hops); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.file, got, tc.want)
		}
	}
	// Text a host printed is no address: a silent hop, never output.
	hops, _ := ParseTraceroute(strings.NewReader(" 1  $(reboot)  0.1 ms\n 2  172.20.1.1  3 ms\n 3  10.0.0.1  4 ms\n 4  *\n"))
	if got := HopsText(hops); got != "* → 172.20.1.1 (private) → 10.0.0.1 (private)" {
		t.Errorf("hostile and private hops: %q", got)
	}
	// The first hop's private address is the host's own router, not a carrier's NAT.
	hops, _ = ParseTraceroute(strings.NewReader(" 1  192.168.253.254  1 ms\n 2  100.127.255.254  25 ms\n 3  100.128.0.1  26 ms\n"))
	if got := HopsText(hops); got != "192.168.253.254 → 100.127.255.254 (CGNAT) → 100.128.0.1" {
		t.Errorf("home router, then CGNAT: %q", got)
	}
}

// TTL-limited pings (iputils) recorded in the same lab.
func TestParseTTLPing(t *testing.T) {
	for _, tc := range []struct {
		file    string
		ttl     int
		addr    string
		space   string
		reached bool
	}{
		{"ttl-exceeded-cgnat.txt", 1, "100.64.0.1", SpaceCGNAT, false},
		{"ttl-reached.txt", 2, "203.0.113.2", "", true},
		{"ttl-silent.txt", 1, "", "", false},
	} {
		hop, reached, err := ParseTTLPing(testutil.OpenTestdata(t, "probe", "ping", tc.file), tc.ttl)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if hop.TTL != tc.ttl || hop.Addr != tc.addr || hop.Space != tc.space || reached != tc.reached {
			t.Errorf("%s: %+v reached %v, want %s %s reached %v", tc.file, hop, reached, tc.addr, tc.space, tc.reached)
		}
	}
}

// The multi-WAN case's figures: the 5G uplink carried 273 Mbit/s of raw TCP
// and 1.7 through WireGuard, the fiber (raw TCP about 100) 63. Raw TCP
// alone ranks the 5G first and finds nothing; the tunnel over each finds
// the tunnel on the wrong uplink.
func TestFindingByTheTunnelOverEachUplink(t *testing.T) {
	ups := []Uplink{
		{Dev: "eth1", Gateway: "192.168.254.254", Metric: 10, Mbit: 100, TunnelMbit: 63, RTTMs: 3},
		{Dev: "br-lan.253", Gateway: "192.168.253.254", Metric: 20, Tunnel: true, Mbit: 273, TunnelMbit: 1.7, RTTMs: 25},
	}
	f := Finding(targettest.Spec("local"), "46.38.233.77", "wg", ups, 1.7)
	if f == nil || f.ID != catalog.RouteEndpointUplink {
		t.Fatalf("finding %+v", f)
	}
	if want := "over br-lan.253 (the tunnel carries 1.7 Mbit/s) while eth1 reaches it at 63.0"; !strings.Contains(f.Title, want) {
		t.Errorf("title %q, want %q", f.Title, want)
	}
	if !strings.Contains(f.Detail, "Raw TCP alone would not have shown it (273.0 Mbit/s over br-lan.253, 100.0 over eth1)") {
		t.Errorf("detail %q", f.Detail)
	}
	if a := f.Fixes[0].Action; a == nil || a.Params["dev"] != "eth1" || a.Params["via"] != "192.168.254.254" {
		t.Errorf("fix %+v, want the endpoint through eth1", f.Fixes)
	}
	if got := f.Evidence[len(f.Evidence)-1].Value; got != "eth1 100.0 Mbit/s (tunnel 63.0) 3.0 ms, br-lan.253 273.0 Mbit/s (tunnel 1.7) 25.0 ms (the tunnel's)" {
		t.Errorf("uplinks evidence %q", got)
	}
	// Without the tunnel over the fiber, raw TCP judges: nothing to say.
	ups[0].TunnelMbit, ups[0].TunnelError = 0, "a fix awaits confirmation"
	if f := Finding(targettest.Spec("local"), "46.38.233.77", "wg", ups, 1.7); f != nil {
		t.Errorf("raw TCP only: %s", f.Title)
	}
	// The tunnel as fast over both: nothing either.
	ups[0].TunnelMbit, ups[1].TunnelMbit = 60, 58
	if f := Finding(targettest.Spec("local"), "46.38.233.77", "wg", ups, 58); f != nil {
		t.Errorf("tunnel alike over both: %s", f.Title)
	}
}

func TestLines(t *testing.T) {
	ups := []Uplink{
		{Dev: "eth0", Gateway: "198.51.100.1", Mbit: 191.1, TunnelMbit: 170.2, TunnelDownMbit: 168.4, RTTMs: 0.04,
			Hops: []Hop{{TTL: 1, Addr: "198.51.100.1"}, {TTL: 2, Addr: "203.0.113.2"}}},
		{Dev: "eth1", Gateway: "192.0.2.1", Tunnel: true, Mbit: 19.1, TunnelMbit: 18.3,
			Hops: []Hop{{TTL: 1, Addr: "100.64.0.1", Space: SpaceCGNAT}, {TTL: 2, Addr: "203.0.113.2"}}},
		{Dev: "wwan\x1b[31m", Gateway: "10.0.0.1", Error: "iperf3: connection refused", TunnelError: "not measured: raw TCP failed", TraceError: "no traceroute"},
	}
	want := []string{
		"eth0 via 198.51.100.1: tunnel 170.2 Mbit/s up, 168.4 down, raw TCP 191.1 Mbit/s, 0.04 ms idle; hops 198.51.100.1 → 203.0.113.2",
		"eth1 via 192.0.2.1 (the tunnel's): tunnel 18.3 Mbit/s, raw TCP 19.1 Mbit/s; hops 100.64.0.1 (CGNAT) → 203.0.113.2",
	}
	got := Lines(ups)
	for i, w := range want {
		if got[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i, got[i], w)
		}
	}
	if s, want := Summary(ups[:2]), "eth0 191.1 Mbit/s (tunnel 170.2 up, 168.4 down) 0.04 ms, eth1 19.1 Mbit/s (tunnel 18.3) (the tunnel's)"; s != want {
		t.Errorf("summary %q, want %q", s, want)
	}
	if strings.Contains(got[2], "\x1b") || !strings.Contains(got[2], "hops not traced (no traceroute)") {
		t.Errorf("hostile device and errors: %q", got[2])
	}
}
