package finding

import "testing"

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
