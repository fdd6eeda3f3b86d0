package parse

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
		"network.@device[0].type":                    "bridge",
		"network.@wireguard_wg[0]":                   "wireguard_wg",
		"network.@wireguard_wg[0].endpoint_host":     "46.38.233.77",
		"network.@wireguard_wg[0].route_allowed_ips": "1",
	}
	for k, want := range tests {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	for _, k := range []string{"network.wg.nohostroute", "network.@wireguard_wg[0].note", "network.lan.ipaddr"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s: not set in the sample, or not on the allow-list", k)
		}
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

func TestParseMwan3Checks(t *testing.T) {
	checks, err := ParseMwan3Checks(openTestdata(t, "openwrt", "logread-mwan3track.txt"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 4, 21, 0, 12, 0, time.UTC)
	want := []facts.HealthChecks{{Interface: "wan", Device: "eth1", Failed: 2, Targets: []string{"1.1.1.1", "8.8.8.8"}, MinScore: 10, First: at, Last: at}}
	if d := cmp.Diff(want, checks); d != "" {
		t.Errorf("transcribed (-want +got)\n%s", d)
	}
	// Recorded from the lab's router node: the fiber's score drained to 5
	// before it went offline, then failed checks at 9-10 after it came back.
	checks, err = ParseMwan3Checks(openTestdata(t, "openwrt", "logread-mwan3track-lab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 {
		t.Fatalf("%d interfaces, want wan alone: %+v", len(checks), checks)
	}
	c := checks[0]
	if c.Interface != "wan" || c.Device != "eth0" || c.Failed != 18 || c.MinScore != 5 ||
		strings.Join(c.Targets, " ") != "198.51.100.1 203.0.113.2" || !c.Last.After(c.First) {
		t.Errorf("recorded = %+v", c)
	}
	events, err := ParseMwan3Events(openTestdata(t, "openwrt", "logread-mwan3track-lab.txt"))
	if err != nil || len(events) != 4 {
		t.Errorf("recorded events = %+v, %v; want 4 (wan offline, online; wan5g offline, online)", events, err)
	}
	if _, err := ParseMwan3Checks(strings.NewReader("Wed Feb 31 21:00:12 2026 user.notice mwan3track[1]: Check (ping) failed for target \"x\" on interface wan (eth1). Current score: 1\n")); err == nil {
		t.Error("a date that does not exist: want an error")
	}
}

// TestParseUCIKeepsOnlyTheAllowList is issue 30 item 7 (hole 6 of the first
// round): a snapshot keeps section lines and the options the checks read,
// nothing else, whatever an option is called: DDNS update keys, auth and API
// keys, pppd_options with a password, notes; nor a section line whose value
// is no section type, however the section is named.
func TestParseUCIKeepsOnlyTheAllowList(t *testing.T) {
	in := `network.wan=interface
network.wan.proto='pppoe'
network.wan.device='eth1'
network.wan.username='alice'
network.wan.password='pppoe-SECRET-1'
network.wan.pppd_options='debug user alice password SECRET-2'
network.wan.updatekey='SECRET-3'
network.wan.authkey='SECRET-4'
network.wan.apikey='SECRET-5'
network.lte.pincode='SECRET-6'
network.wg.private_key='SECRET-7'
network.wg.mtu='1420'
network.@wireguard_wg[0]=wireguard_wg
network.@wireguard_wg[0].preshared_key='SECRET-8'
network.@wireguard_wg[0].description='SECRET-9 (Alice'\''s laptop)'
network.@wireguard_wg[0].persistent_keepalive='25'
network.vpn.ca_key_pass='SECRET-10'
mwan3.wan=interface
mwan3.wan.track_ip='1.1.1.1' '8.8.8.8'
mwan3.wan.notify_secret='SECRET-11'
banip.global=banip
banip.global.ban_icmplimit='25'
banip.global.ban_apikey='SECRET-12'
ddns.myddns.password='SECRET-13'
network.private_key=SECRET14
network.wan_pass=SECRET15
network.@bridge-vlan[0]=bridge-vlan
network.peer2=wireguard_wg-home
`
	m, err := ParseUCI(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if strings.Contains(v, "SECRET") {
			t.Errorf("%s kept: %q", k, v)
		}
	}
	want := map[string]string{
		"network.wan": "interface", "network.wan.proto": "pppoe", "network.wan.device": "eth1", "network.wg.mtu": "1420",
		"network.@wireguard_wg[0]": "wireguard_wg", "network.@wireguard_wg[0].persistent_keepalive": "25",
		"network.@bridge-vlan[0]": "bridge-vlan", "network.peer2": "wireguard_wg-home",
		"mwan3.wan": "interface", "mwan3.wan.track_ip": "1.1.1.1 8.8.8.8", "banip.global": "banip", "banip.global.ban_icmplimit": "25",
	}
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
}

func TestParseMwan3Status(t *testing.T) {
	uplinks, policies, err := ParseMwan3Status(openTestdata(t, "openwrt", "mwan3-status-full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantUplinks := []facts.Mwan3Uplink{
		{Interface: "wan", Status: "online", Tracking: "active", Online: 60*3600 + 53*60 + 12, Uptime: 60*3600 + 54*60 + 40},
		{Interface: "wan5g", Status: "online", Tracking: "active", Online: 83*3600 + 6*60 + 31, Uptime: 1485*3600 + 25*60 + 9},
		{Interface: "wan6", Status: "disabled", Tracking: "down"},
	}
	if d := cmp.Diff(wantUplinks, uplinks); d != "" {
		t.Errorf("uplinks (-want +got):\n%s", d)
	}
	wantPolicies := []facts.Mwan3Policy{
		{Name: "balanced", Family: "ipv4", Shares: []facts.Mwan3Share{{Interface: "wan", Percent: 66}, {Interface: "wan5g", Percent: 33}}},
		{Name: "fiber_5g_backup", Family: "ipv4", Shares: []facts.Mwan3Share{{Interface: "wan", Percent: 100}}},
		{Name: "wan5g_only", Family: "ipv4", Shares: []facts.Mwan3Share{{Interface: "wan5g", Percent: 100}}},
		{Name: "fiber_5g_backup", Family: "ipv6", Shares: []facts.Mwan3Share{}},
	}
	if d := cmp.Diff(wantPolicies, policies); d != "" {
		t.Errorf("policies (-want +got):\n%s", d)
	}

	uplinks, policies, err = ParseMwan3Status(openTestdata(t, "openwrt", "mwan3-status.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(uplinks) != 2 || uplinks[1] != (facts.Mwan3Uplink{Interface: "wan5g", Status: "online", Online: 83*3600 + 6*60, Uptime: 1485*3600 + 25*60}) ||
		len(policies) != 1 || !cmp.Equal(policies[0], facts.Mwan3Policy{Name: "fiber_5g_backup", Family: "ipv4", Shares: []facts.Mwan3Share{{Interface: "wan", Percent: 100}}}) {
		t.Errorf("the case's status: uplinks %+v, policies %+v", uplinks, policies)
	}

	// As the multi-WAN router case quotes it: condensed, and mwan3 of its day
	// printed the times after the state, without seconds.
	for _, tt := range []struct {
		in     string
		uplink facts.Mwan3Uplink
		policy *facts.Mwan3Policy
	}{
		{in: "interface wan5g is online (online 83h:06m, uptime 1485h:25m)\nfiber_5g_backup: wan (100%)",
			uplink: facts.Mwan3Uplink{Interface: "wan5g", Status: "online", Online: 83*3600 + 6*60, Uptime: 1485*3600 + 25*60},
			policy: &facts.Mwan3Policy{Name: "fiber_5g_backup", Shares: []facts.Mwan3Share{{Interface: "wan", Percent: 100}}}},
		{in: " interface wan is online 00h:02m:18s, uptime 00h:03m:31s and tracking is active",
			uplink: facts.Mwan3Uplink{Interface: "wan", Status: "online", Tracking: "active", Online: 138, Uptime: 211}},
		{in: "Interface status:\n interface wanb is offline and tracking is down (13)\nnote: not a policy",
			uplink: facts.Mwan3Uplink{Interface: "wanb", Status: "offline", Tracking: "down"}},
	} {
		uplinks, policies, err := ParseMwan3Status(strings.NewReader(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if len(uplinks) != 1 || uplinks[0] != tt.uplink {
			t.Errorf("%q: uplinks %+v, want %+v", tt.in, uplinks, tt.uplink)
		}
		switch {
		case tt.policy == nil && len(policies) > 0:
			t.Errorf("%q: policies %+v, want none", tt.in, policies)
		case tt.policy != nil && (len(policies) != 1 || !cmp.Equal(policies[0], *tt.policy)):
			t.Errorf("%q: policies %+v, want %+v", tt.in, policies, *tt.policy)
		}
	}
}

func TestParseNetifdDump(t *testing.T) {
	got, err := ParseNetifdDump(openTestdata(t, "openwrt", "ubus-network-interface-dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []facts.NetifdInterface{
		{Name: "lan", Up: true, Uptime: 5347811, Device: "br-lan", Proto: "static"},
		{Name: "wan", Up: true, Uptime: 219254, Device: "eth1", Proto: "dhcp"},
		{Name: "wan5g", Up: true, Uptime: 5347500, Device: "br-lan.253", Proto: "static"},
		{Name: "wg", Up: true, Uptime: 5344680, Device: "wg", Proto: "wireguard"},
		{Name: "wan6", Proto: "dhcpv6"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("interfaces (-want +got):\n%s", d)
	}
	if _, err := ParseNetifdDump(strings.NewReader("Command failed: Not found")); err == nil {
		t.Error("ubus's error text parsed as a dump")
	}
}
