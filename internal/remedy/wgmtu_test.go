package remedy

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// Issue 40: a tunnel that systemd-networkd or NetworkManager makes at boot
// gets its MTU there, not only a note: MTUBytes= in its .netdev (the old
// file comes back on rollback), or its connection's wireguard.mtu.
func TestWGMTUPersistsWhereTheTunnelIsMade(t *testing.T) {
	const netdev = "[NetDev]\nName=wg0\nKind=wireguard\nMTUBytes=1420\n\n[WireGuard]\nListenPort=51820\nPrivateKeyFile=/etc/systemd/network/wg0.key\n"
	t.Run("systemd-networkd", func(t *testing.T) {
		h := targettest.New("ssh:root@deb")
		h.Files["/sys/class/net/wg0/mtu"] = "1420\n"
		h.Files["/etc/systemd/network/10-lan.netdev"] = "[NetDev]\nName=br0\nKind=bridge\n"
		h.Files["/etc/systemd/network/50-wg0.netdev"] = netdev
		h.On(shell.Join("sh", "-c", listNetdevs, "sh", "/etc/systemd/network"), "/etc/systemd/network/10-lan.netdev\n/etc/systemd/network/50-wg0.netdev\n")
		st, err := must(t)(WGMTU("wg0", 1380, Linux, "")).Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Files) != 1 || st.Files[0].Path != "/etc/systemd/network/50-wg0.netdev" || string(st.Files[0].Old) != netdev || !st.Files[0].Existed {
			t.Fatalf("files %+v", st.Files)
		}
		if want := strings.Replace(netdev, "MTUBytes=1420", "MTUBytes=1380", 1); string(st.Files[0].New) != want {
			t.Errorf("new .netdev:\n%s", cmp.Diff(want, string(st.Files[0].New)))
		}
		if n := strings.Join(st.Notes, "\n"); !strings.Contains(n, "persists: systemd-networkd creates wg0 from /etc/systemd/network/50-wg0.netdev at boot") {
			t.Errorf("notes %q", n)
		}
	})
	t.Run("NetworkManager", func(t *testing.T) {
		h := targettest.New("ssh:root@fedora")
		h.Files["/sys/class/net/wg0/mtu"] = "1420\n"
		h.On("nmcli -g GENERAL.CONNECTION device show wg0", "office vpn\n")
		h.On("nmcli -g wireguard.mtu connection show 'office vpn'", "0\n")
		st, err := must(t)(WGMTU("wg0", 1380, Linux, "")).Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"ip link set dev wg0 mtu 1380", "nmcli connection modify 'office vpn' wireguard.mtu 1380"}, st.Commands); d != "" {
			t.Errorf("commands (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"nmcli connection modify 'office vpn' wireguard.mtu 0", "ip link set dev wg0 mtu 1420"}, st.Undo); d != "" {
			t.Errorf("undo (-want +got):\n%s", d)
		}
		if n := strings.Join(st.Notes, "\n"); !strings.Contains(n, "persists: NetworkManager") || strings.Contains(n, "runtime only") {
			t.Errorf("notes %q", n)
		}
	})
	t.Run("unmanaged", func(t *testing.T) {
		h := targettest.New("ssh:root@x")
		h.Files["/sys/class/net/wg0/mtu"] = "1420\n"
		st, err := must(t)(WGMTU("wg0", 1380, Linux, "")).Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Join(st.Notes, "\n"); !strings.Contains(n, "runtime only: no wg-quick config, systemd-networkd .netdev, NetworkManager connection") {
			t.Errorf("notes %q", n)
		}
	})
}
