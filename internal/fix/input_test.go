package fix

import (
	"io"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func TestReadFindings(t *testing.T) {
	const one = `{"id":"route.stale-endpoint","severity":"critical","host":"ssh:root@golem","title":"t","evidence":[],"fixes":[{"description":"d","commands":[],"action":{"kind":"endpoint-route","params":{"endpoint":"46.38.233.77","table":"main"}}}]}`
	for _, tc := range []struct {
		name, in string
		want     int
		err      string
	}{
		{"array", "[" + one + "," + one + "]", 2, ""},
		{"report object", `{"hosts":["ssh:root@golem"],"findings":[` + one + `]}`, 1, ""},
		{"empty findings", `{"findings":[]}`, 0, ""},
		{"no findings key", `{"schema_version":1}`, 0, `no "findings"`},
		{"bad severity", `[{"id":"x","severity":"dire"}]`, 0, "severity"},
		{"not json", `hello`, 0, "not JSON"},
		// Hole 2: a newline in an ID would end the comment it is printed in.
		{"ID with a newline", `[{"id":"udp.rcvbuf-errors\ntouch /tmp/x #","severity":"warning"}]`, 0, "finding ID"},
		{"ssh option as host", `{"findings":[{"id":"mtu.x","severity":"info","host":"ssh:-oProxyCommand=x"}]}`, 0, "finding 1"},
		{"newline in a uci-set value", `[{"id":"route.stale-endpoint","severity":"info","fixes":[{"description":"d",
			"action":{"kind":"uci-set","params":{"key":"mwan3.wan.reliability","value":"1\ntouch /tmp/x #"}}}]}]`, 0, "param uci-set.value"},
		{"escape in interface", `[{"id":"mtu.x","severity":"info","interface":"wg0\u001b[2J"}]`, 0, "interface"},
		// Issue 30 item 8: free text is validated too; a newline in it would
		// forge a plan line, an escape sequence drive whatever shows it.
		{"plan line forged in a fix description", `[{"id":"mtu.x","severity":"info","fixes":[{"description":"d (by hand; wgperf has no action for it)\n\n1. [udp.rcvbuf-errors] set net.core.rmem_max = 26214400","commands":["true"]}]}]`,
			0, "finding 1: fixes[0].description"},
		{"OSC 52 in a by-hand command", `[{"id":"mtu.x","severity":"info","fixes":[{"description":"d","commands":["ip link\u001b]52;c;Y3VybCBldmlsfHNo\u0007"]}]}]`,
			0, "finding 1: fixes[0].commands[0]"},
		{"screen clear in a config line", `[{"id":"mtu.x","severity":"info","fixes":[{"description":"d","commands":[],"config":[{"path":"/etc/x","lines":["MTU = 1420\u001b[2J\u001b[H"]}]}]}]`,
			0, "finding 1: fixes[0].config[0].lines[0]"},
		{"C1 CSI in a title", `[{"id":"mtu.x","severity":"info","title":"t\u009b2J"}]`, 0, "finding 1: title"},
		{"newline in evidence", `[{"id":"mtu.x","severity":"info","evidence":[{"source":"s","key":"k","value":"1\nforged"}]}]`, 0, "finding 1: evidence[0].value"},
		// Issue 30 item 1: an action only as the finding's catalog entry allows.
		{"a sysctl under the black hole", `[{"id":"mtu.pmtud-blackhole","severity":"critical","fixes":[{"description":"d",
			"action":{"kind":"sysctl","params":{"key":"kernel.randomize_va_space","value":"0"}}}]}]`, 0,
			`finding 1: refused, not a fix wgperf proposes: mtu.pmtud-blackhole: sysctl key="kernel.randomize_va_space": want one of net.ipv4.tcp_mtu_probing`},
		{"a bond policy under the black hole", `[{"id":"mtu.pmtud-blackhole","severity":"critical","fixes":[{"description":"d",
			"action":{"kind":"bond-hash","params":{"bond":"bond0","policy":"layer3+4"}}}]}]`, 0,
			`finding 1: refused, not a fix wgperf proposes: mtu.pmtud-blackhole is fixed by wg-mtu, mss-clamp, sysctl, offload, not "bond-hash"`},
		{"another sysctl under the rcvbuf finding", `[{"id":"udp.rcvbuf-errors","severity":"warning","fixes":[{"description":"d",
			"action":{"kind":"sysctl","params":{"key":"kernel.randomize_va_space","value":"0"}}}]}]`, 0, `sysctl key="kernel.randomize_va_space": want one of net.core.rmem_max`},
		{"any uci key with a restart", `[{"id":"route.stale-endpoint","severity":"critical","fixes":[{"description":"d",
			"action":{"kind":"uci-set","params":{"key":"dropbear.main.PasswordAuth","value":"on","restart":"dropbear"}}}]}]`, 0, `is fixed by endpoint-route, not "uci-set"`},
		{"modprobe of any tcp_ module", `[{"id":"tcp.congestion-control","severity":"warning","fixes":[{"description":"d",
			"action":{"kind":"congestion-control","params":{"algorithm":"evil"}}}]}]`, 0, `algorithm="evil": want one of bbr`},
		{"an ID outside the catalog", `[{"id":"mtu.x","severity":"info","fixes":[{"description":"d",
			"action":{"kind":"congestion-control","params":{"algorithm":"bbr"}}}]}]`, 0, `finding mtu.x is not in the catalog`},
		{"tabs in a config line are fine", `[{"id":"mtu.x","severity":"info","fixes":[{"description":"d","commands":[],"config":[{"path":"/etc/x","lines":["a\tb"]}]}]}]`, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := ReadFindings(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || len(fs) != tc.want {
				t.Fatalf("got %d findings, %v; want %d", len(fs), err, tc.want)
			}
		})
	}
}

// TestReadFindingsRefusesHuge is hole 7 for findings files: over 64 MiB is
// refused before parsing, even when what follows is valid.
func TestReadFindingsRefusesHuge(t *testing.T) {
	huge := io.MultiReader(io.LimitReader(blanks{}, MaxFindingsBytes), strings.NewReader("[]"))
	if _, err := ReadFindings(huge); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("err = %v, want a size refusal", err)
	}
}

type blanks struct{}

func (blanks) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestFromIsOfflineUnlessTold is hole 4: findings about a host named only in
// the file never pick the target (and cmd/wgperf's TestFixFromStaysOffline:
// --apply needs --host).
func TestFromIsOfflineUnlessTold(t *testing.T) {
	fs := []finding.Finding{{ID: "a", Host: targettest.Spec("ssh:-oProxyCommand=x")}, {ID: "b"}}
	got, err := ForHost(fs, targettest.Spec("local"))
	if err != nil || len(got) != 1 || got[0].ID != "b" {
		t.Errorf("ForHost(local) = %v, %v", got, err)
	}
	_, err = ForHost(fs[:1], targettest.Spec("local"))
	if err == nil || !strings.Contains(err.Error(), `"ssh:-oProxyCommand=x"`) {
		t.Errorf("file about another host only: err = %v", err)
	}
}
