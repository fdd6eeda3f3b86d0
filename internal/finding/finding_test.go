package finding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wgperf/wgperf/internal/target/targettest"
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
		ID: "mtu.pmtud-blackhole", Severity: Critical, Host: targettest.Spec("netns:a"),
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

func TestMerge(t *testing.T) {
	bump := Fix{Description: "Raise rmem_max", Commands: []string{"sysctl -w net.core.rmem_max=26214400"},
		Action: &Action{Kind: "sysctl", Params: map[string]string{"key": "net.core.rmem_max", "value": "26214400"}}}
	probe := Finding{ID: "udp.rcvbuf-errors", Severity: Warning, Host: targettest.Spec("netns:b"), Title: "UDP buffers overflowed under tunnel load",
		Evidence: []Evidence{{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors (growth during tunnel runs)", Value: "4,659", Threshold: "0"}},
		Fixes:    []Fix{bump}}
	passive := Finding{ID: "udp.rcvbuf-errors", Severity: Warning, Host: targettest.Spec("netns:b"), Title: "UDP buffer overflows",
		Evidence: []Evidence{
			{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors", Value: "4659", Threshold: "0"},
			{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors (growth during tunnel runs)", Value: "4,659", Threshold: "0"},
		},
		Fixes: []Fix{bump}}
	other := Finding{ID: "udp.rcvbuf-errors", Severity: Critical, Host: targettest.Spec("netns:a"), Title: "on A"}
	cc := Finding{ID: "tcp.congestion-control", Severity: Critical, Host: targettest.Spec("netns:b"), Title: "CUBIC"}

	got := Merge([]Finding{probe, other, passive, cc})
	want := []Finding{
		{ID: "udp.rcvbuf-errors", Severity: Warning, Host: targettest.Spec("netns:b"), Title: "UDP buffers overflowed under tunnel load",
			Evidence: []Evidence{probe.Evidence[0], passive.Evidence[0]}, Fixes: []Fix{bump}},
		other, cc,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if len(probe.Evidence) != 1 {
		t.Errorf("Merge changed its input: %+v", probe.Evidence)
	}

	// A more severe duplicate lends its severity, title and detail.
	worse := passive
	worse.Severity, worse.Title = Critical, "drops at line rate"
	got = Merge([]Finding{probe, worse})
	if len(got) != 1 || got[0].Severity != Critical || got[0].Title != "drops at line rate" {
		t.Errorf("Merge kept %+v, want the critical title", got)
	}
}

// Evidence carries its quantity beside the display value; a value that is no
// quantity has no "number" at all, and a zero quantity keeps its 0.
func TestEvidenceJSON(t *testing.T) {
	for _, tc := range []struct {
		e    Evidence
		want string
	}{
		{Evidence{Source: "sysctl", Key: "net.core.rmem_max", Value: "4194304 (4 MiB)"}.Of(4194304, Bytes),
			`{"source":"sysctl","key":"net.core.rmem_max","value":"4194304 (4 MiB)","number":4194304,"unit":"bytes"}`},
		{Evidence{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors", Value: "0", Threshold: "0"}.Of(0, Packets),
			`{"source":"/proc/net/snmp","key":"Udp RcvbufErrors","value":"0","threshold":"0","number":0,"unit":"packets"}`},
		{Evidence{Source: "ip route get 203.0.113.2", Key: "dev", Value: "eth1"},
			`{"source":"ip route get 203.0.113.2","key":"dev","value":"eth1"}`},
	} {
		b, err := json.Marshal(tc.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got  %s\nwant %s", b, tc.want)
		}
		var back Evidence
		if err := json.Unmarshal(b, &back); err != nil || back != tc.e {
			t.Errorf("round trip: %+v, %v; want %+v", back, err, tc.e)
		}
	}
}
