package remedy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// listLine is how the plan asks a host for its userspace WireGuard sockets.
var listLine = shell.Join("sh", "-c", listWGSockets)

// A raised socket limit reaches only sockets opened after it: the plan that
// raises rmem_max re-opens each userspace WireGuard socket after the change
// and again after its undo, so verify measures the tunnel with the new
// buffers and a rollback gives it the old ones back. A limit already in place
// re-opens only a socket that still holds a small buffer.
func TestSocketLimitReachesRunningTunnel(t *testing.T) {
	capped, err := os.ReadFile(filepath.Join("testdata", "wg-sockets-capped.txt")) // recorded on a lab node: wireguard-go with 64 KiB buffers
	if err != nil {
		t.Fatal(err)
	}
	const reopen = "wg set wg-fd1-a listen-port 51820"
	for _, tc := range []struct {
		name, key, now, sockets string
		want                    Step
	}{
		{"raised, userspace", "net.core.rmem_max", "212992", string(capped), Step{
			Summary:  "net.core.rmem_max: 212992 -> 26214400",
			Commands: []string{"sysctl -w net.core.rmem_max=26214400", reopen},
			Undo:     []string{"sysctl -w net.core.rmem_max=212992", reopen},
		}},
		{"raised, send limit", "net.core.wmem_max", "212992", string(capped), Step{
			Summary:  "net.core.wmem_max: 212992 -> 26214400",
			Commands: []string{"sysctl -w net.core.wmem_max=26214400", reopen},
			Undo:     []string{"sysctl -w net.core.wmem_max=212992", reopen},
		}},
		{"raised, kernel WireGuard only", "net.core.rmem_max", "212992", "", Step{
			Summary:  "net.core.rmem_max: 212992 -> 26214400",
			Commands: []string{"sysctl -w net.core.rmem_max=26214400"},
			Undo:     []string{"sysctl -w net.core.rmem_max=212992"},
		}},
		{"in place, socket opened before it", "net.core.rmem_max", "26214400", string(capped), Step{
			Summary:  "net.core.rmem_max: 26214400 -> 26214400; re-open wg-fd1-a (port 51820, 64 KiB now)",
			Commands: []string{reopen},
		}},
		{"in place, socket has it", "net.core.rmem_max", "26214400", "wg0 51820 14680064 14680064\n", Step{
			Summary: "net.core.rmem_max: 26214400 -> 26214400",
			Done:    true,
		}},
		{"in place, buffers unknown (no ss)", "net.core.rmem_max", "26214400", "wg0 51820 -\n", Step{
			Summary: "net.core.rmem_max: 26214400 -> 26214400",
			Done:    true,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := targettest.New("ssh:root@nas")
			h.On("sysctl -n "+tc.key, tc.now+"\n")
			h.On(listLine, tc.sockets)
			h.Files[SysctlConf] = "# Written by wgperf fix; remove a line (or this file) to undo at next boot.\n" + tc.key + " = 26214400\n"
			r := must(t)(Sysctl(tc.key, "26214400"))
			st, err := r.Plan(context.Background(), &Env{T: h, Root: "/"})
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Kind, tc.want.Notes = KindSysctl, st.Notes
			if d := cmp.Diff(tc.want, st); d != "" {
				t.Errorf("step (-want +got)\n%s", d)
			}
			if len(st.Commands) > 0 && len(st.Notes) == 0 {
				t.Errorf("a step that re-opens (or cannot) says nothing about the running sockets")
			}
		})
	}
}

// Limits a socket reads at every packet, not only when it opens, re-open
// nothing and do not even look.
func TestLiveLimitsReopenNothing(t *testing.T) {
	h := targettest.New("ssh:root@nas")
	h.On("sysctl -n net.core.netdev_max_backlog", "1000\n")
	st, err := must(t)(Sysctl("net.core.netdev_max_backlog", "5000")).Plan(context.Background(), &Env{T: h, Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"sysctl -w net.core.netdev_max_backlog=5000"}, st.Commands); d != "" {
		t.Errorf("commands (-want +got)\n%s", d)
	}
	for _, c := range h.Ran() {
		if strings.Contains(c, "wireguard") {
			t.Errorf("looked for WireGuard sockets for a live limit: %s", c)
		}
	}
}

// What a host prints about its sockets is foreign text: only interface names
// and ports make a command.
func TestParseWGSocketsRefusesForeignText(t *testing.T) {
	got := parseWGSockets("wg0 51820 65536 65536\n-rf 51820\nwg1 0 - -\nwg2 99999\nwg;reboot 51820\nwg3 abc\nwg4 443 - -\n")
	want := []wgSocket{{iface: "wg0", port: 51820, rcv: 65536, snd: 65536}, {iface: "wg4", port: 443}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(wgSocket{})); d != "" {
		t.Errorf("sockets (-want +got)\n%s", d)
	}
}
