package parse

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/facts"
)

func TestParseWGDumpRecorded(t *testing.T) {
	raw := readTestdata(t, "wg", "dump-two-netns")
	got, err := ParseWGDump(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	hs := time.Unix(1795307408, 0).UTC()
	want := []facts.WGInterface{
		{
			Name: "wgc-wga", PublicKey: "LCxBY2b2gvCUugNmSj7pdo5H4zzZEJFz93aeePYT1lo=", ListenPort: 51820, FwMark: 0x1234,
			Peers: []facts.WGPeer{
				{PublicKey: "gkPbK+FKF5AI265ZCqOE7Jb3AUnUU1PubhFnqNV+3EA=", Endpoint: "192.0.2.2:51820",
					AllowedIPs: []string{"10.99.0.2/32", "fd00:99::2/128"}, LatestHandshake: hs,
					RxBytes: 476, TxBytes: 712, PersistentKeepalive: 25},
				{PublicKey: "D4AcJioNk6a70MlO+/dkcUYgUx5EuGliA9qLMIZ5mFI=", AllowedIPs: []string{"10.99.5.0/24"}},
				{PublicKey: "ow6O8x/FTpUVdwlBpjWRzLlgv4XzJkSkaaFdhzxp3iw=", AllowedIPs: []string{}},
			},
		},
		{
			Name: "wgc-wgb", PublicKey: "gkPbK+FKF5AI265ZCqOE7Jb3AUnUU1PubhFnqNV+3EA=", ListenPort: 51820,
			Peers: []facts.WGPeer{
				{PublicKey: "LCxBY2b2gvCUugNmSj7pdo5H4zzZEJFz93aeePYT1lo=", Endpoint: "192.0.2.1:51820",
					AllowedIPs: []string{"10.99.0.1/32"}, LatestHandshake: hs, RxBytes: 564, TxBytes: 476},
			},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}

	// No private or preshared key may survive into the facts.
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Split(line, "\t")
		var secrets []string
		switch len(f) {
		case 5:
			secrets = []string{f[1]}
		case 9:
			secrets = []string{f[2]}
		}
		for _, s := range secrets {
			if s != "(none)" && bytes.Contains(out, []byte(s)) {
				t.Errorf("secret key %s… leaked into the parsed facts", s[:6])
			}
		}
	}
}

func TestParseWGDumpErrors(t *testing.T) {
	iface := "wg0\tPRIV\tPUB\t51820\toff\n"
	tests := []struct {
		name, in, wantErr string
	}{
		{"wrong field count", "wg0\ta\tb\n", "3 tab-separated fields"},
		{"peer before interface", "wg0\tPUB\t(none)\t(none)\t(none)\t0\t0\t0\toff\n", "unknown interface wg0"},
		{"bad port", "wg0\tPRIV\tPUB\tx\toff\n", "bad listen port"},
		{"bad fwmark", "wg0\tPRIV\tPUB\t1\tzz\n", "bad fwmark"},
		{"duplicate interface", iface + iface, "listed twice"},
		{"bad handshake", iface + "wg0\tK\t(none)\t(none)\t(none)\t-1\t0\t0\toff\n", "bad latest handshake"},
		{"bad rx", iface + "wg0\tK\t(none)\t(none)\t(none)\t0\tx\t0\toff\n", "bad rx bytes"},
		{"bad keepalive", iface + "wg0\tK\t(none)\t(none)\t(none)\t0\t0\t0\tsoon\n", "bad persistent keepalive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWGDump(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseWGDumpEmpty(t *testing.T) {
	got, err := ParseWGDump(strings.NewReader(""))
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no interfaces and no error", got, err)
	}
}
