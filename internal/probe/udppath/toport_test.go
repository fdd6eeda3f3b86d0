package udppath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The nft commands of a run to WireGuard's port: the far end's address is
// foreign text and must be an address; the rules rewrite iperf3's datagrams
// to the port and back, and count them on arrival.
func TestToPortRules(t *testing.T) {
	tp, err := newToPort("203.0.113.2", 51820, 5201, 5296)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"add rule ip wgperf_wgport out ip daddr 203.0.113.2 udp sport 5296 udp dport 5201 dnat to 203.0.113.2:51820",
		"add rule ip wgperf_wgport count ip saddr 203.0.113.2 udp sport 51820 udp dport 5296 counter name arrived",
	} {
		if !strings.Contains(tp.client, want) {
			t.Errorf("client's rules lack %q:\n%s", want, tp.client)
		}
	}
	for _, want := range []string{
		"add rule ip wgperf_wgport count udp sport 5296 udp dport 51820 counter name arrived",
		"add rule ip wgperf_wgport pre udp sport 5296 udp dport 51820 redirect to :5201",
		"type filter hook prerouting priority -200;", "type nat hook prerouting priority -100;",
	} {
		if !strings.Contains(tp.server, want) {
			t.Errorf("server's rules lack %q:\n%s", want, tp.server)
		}
	}
	v6, err := newToPort("2001:db8::2", 51820, 5201, 5296)
	if err != nil || v6.family != "ip6" || !strings.Contains(v6.client, "dnat to [2001:db8::2]:51820") || !strings.Contains(v6.client, "ip6 saddr 2001:db8::2 ") {
		t.Errorf("IPv6: %v %+v", err, v6)
	}
	if m, err := newToPort("::ffff:203.0.113.2", 51820, 5201, 5296); err != nil || m.family != "ip" || !strings.Contains(m.client, "dnat to 203.0.113.2:51820") {
		t.Errorf("IPv4-mapped: %v %+v", err, m)
	}
	for _, bad := range []struct {
		addr          string
		wg, ip, sport int
	}{
		{"203.0.113.2; flush ruleset", 51820, 5201, 5296},
		{"fe80::1%eth0", 51820, 5201, 5296},
		{"example.com", 51820, 5201, 5296},
		{"203.0.113.2", 0, 5201, 5296},
		{"203.0.113.2", 51820, 5201, 51820},
		{"203.0.113.2", 51820, 5201, 70000},
	} {
		if _, err := newToPort(bad.addr, bad.wg, bad.ip, bad.sport); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// The receiving end's counter, as "nft -j list counter" prints it
// (recorded in a lab namespace after a 2-second run at 20 Mbit/s).
func TestCountedPackets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "counters", "nft-wgport-counter.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := countedPackets(b); err != nil || n != 3453 {
		t.Errorf("counted %d, %v; want 3453", n, err)
	}
	if _, err := countedPackets([]byte(`{"nftables": [{"metainfo": {"version": "1.0.6"}}]}`)); err == nil {
		t.Error("no counter: no error")
	}
}
