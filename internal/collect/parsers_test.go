package collect

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/facts"
)

func TestParseUCI(t *testing.T) {
	raw := readTestdata(t, "openwrt", "uci-show-network.txt")
	m, err := ParseUCI(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"network.wg":                                 "interface",
		"network.wg.proto":                           "wireguard",
		"network.wan.metric":                         "10",
		"network.@device[0].ports":                   "lan1 lan2 lan3",
		"network.@wireguard_wg[0].endpoint_host":     "46.38.233.77",
		"network.@wireguard_wg[0].note":              "it's the colo box",
		"network.@wireguard_wg[0].route_allowed_ips": "1",
	}
	for k, want := range tests {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	if _, ok := m["network.wg.nohostroute"]; ok {
		t.Error("nohostroute is not set in the sample")
	}
	for _, secret := range []string{"oKx3Y9y1bK0eK3aWq6Yz3Xf2f3D4c5B6a7Z8y9X0w1E=", "cHJlc2hhcmVka2V5cHJlc2hhcmVka2V5cHJlc2hhcmU="} {
		for k, v := range m {
			if strings.Contains(v, secret) {
				t.Errorf("secret kept under %s", k)
			}
		}
	}
	banip, err := ParseUCI(openTestdata(t, "openwrt", "uci-show-banip.txt"))
	if err != nil || banip["banip.global.ban_icmplimit"] != "25" {
		t.Errorf("banip = %v, %v", banip, err)
	}
	if _, err := ParseUCI(strings.NewReader("network.wg.proto='wireguard\n")); err == nil {
		t.Error("unterminated quote: want an error")
	}
}

// TestParseUCIDropsSecrets is hole 6: uci options whose names look secret
// never reach a snapshot; ordinary options, public keys included, stay.
func TestParseUCIDropsSecrets(t *testing.T) {
	in := `network.wan=interface
network.wan.proto='pppoe'
network.wan.username='alice'
network.wan.password='pppoe-SECRET-1'
network.lte.pincode='SECRET-2'
network.lte.pin='SECRET-3'
network.wg.private_key='SECRET-4'
network.@wireguard_wg[0].preshared_key='SECRET-5'
network.@wireguard_wg[0].public_key='cHVibGlj'
network.@wireguard_wg[0].persistent_keepalive='25'
network.vpn.auth_secret='SECRET-6'
network.vpn.api_token='SECRET-7'
network.vpn.key='SECRET-8'
network.vpn.psk='SECRET-9'
network.vpn.wpa_psk_file='SECRET-10'
network.vpn.key2='SECRET-11'
network.vpn.sae_password='SECRET-12'
network.vpn.ca_key_pass='SECRET-13'
network.lan.ipaddr='192.168.1.1'
network.lan.keepalive='5'
`
	m, err := ParseUCI(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if strings.Contains(v, "SECRET") {
			t.Errorf("secret option %s kept", k)
		}
	}
	for _, k := range []string{"network.wan.username", "network.@wireguard_wg[0].public_key",
		"network.@wireguard_wg[0].persistent_keepalive", "network.lan.ipaddr", "network.lan.keepalive", "network.wan"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s dropped", k)
		}
	}
}

func TestParseMwan3Events(t *testing.T) {
	ev, err := ParseMwan3Events(openTestdata(t, "openwrt", "logread-mwan3track.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 8 {
		t.Fatalf("%d events, want 8 (check failures are not state changes)", len(ev))
	}
	want := facts.LinkEvent{Time: time.Date(2026, 2, 4, 22, 30, 41, 0, time.UTC), Interface: "wan", Device: "eth1", State: "offline"}
	if d := cmp.Diff(want, ev[0]); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if ev[4].Interface != "wan5g" || ev[4].Device != "br-lan.253" {
		t.Errorf("5G event = %+v", ev[4])
	}
}

func TestParseBatchAndGrepFiles(t *testing.T) {
	out := batchMark + " out a\nhello\n\n" + batchMark + " err a 0\n\n" +
		batchMark + " out b\n\n" + batchMark + " err b 127\nsh: 1: wg: not found\n" +
		batchMark + " out c\nno newline\n" + batchMark + " err c 2\nboom\n"
	got := parseBatch(out)
	want := map[string]cmdResult{
		"a": {Out: "hello\n"},
		"b": {Code: 127, Stderr: "sh: 1: wg: not found"},
		"c": {Out: "no newline", Code: 2, Stderr: "boom"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	files := parseGrepFiles(strings.NewReader("/proc/sys/net/core/rmem_max:212992\n/proc/net/snmp:Ip: a\n/proc/net/snmp:Ip: 1\ngrep: /proc/sys/net/x: No such file or directory\ngrep: /etc/shadow: Permission denied\n"))
	wantFiles := map[string]*fileRead{
		"/proc/sys/net/core/rmem_max": {Content: "212992\n"},
		"/proc/net/snmp":              {Content: "Ip: a\nIp: 1\n"},
		"/proc/sys/net/x":             {Err: "No such file or directory"},
		"/etc/shadow":                 {Err: "Permission denied"},
	}
	if d := cmp.Diff(wantFiles, files); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
