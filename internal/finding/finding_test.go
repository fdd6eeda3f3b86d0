package finding

import (
	"strings"
	"testing"
)

func TestEvidenceString(t *testing.T) {
	for _, tc := range []struct {
		e    Evidence
		want string
	}{
		{Evidence{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors", Value: "9312", Threshold: "0"},
			"/proc/net/snmp: Udp RcvbufErrors = 9312  (threshold: 0)"},
		{Evidence{Source: "ip route get 203.0.113.2", Key: "dev", Value: "eth1 via 192.0.2.1"},
			"ip route get 203.0.113.2: dev = eth1 via 192.0.2.1"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestWriteBrief(t *testing.T) {
	fs := []Finding{{
		ID: "mtu.pmtud-blackhole", Severity: Critical, Host: "netns:a",
		Title:    "PMTUD black hole towards 203.0.113.2",
		Evidence: []Evidence{{Source: "ping -M do", Key: "largest DF probe that passed", Value: "1400 bytes"}},
		Fixes:    []Fix{{Description: "Lower the WireGuard MTU", Commands: []string{"ip link set dev wg0 mtu 1340"}}},
	}}
	var b strings.Builder
	if err := WriteBrief(&b, fs); err != nil {
		t.Fatal(err)
	}
	want := `
CRITICAL  mtu.pmtud-blackhole  netns:a: PMTUD black hole towards 203.0.113.2
    ping -M do: largest DF probe that passed = 1400 bytes
  fix: Lower the WireGuard MTU
    $ ip link set dev wg0 mtu 1340
`
	if got := b.String(); got != want {
		t.Errorf("WriteBrief:\n%s\nwant:\n%s", got, want)
	}
}
