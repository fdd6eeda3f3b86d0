package remedy

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// natPeer is the far end's key in the recorded "wg show IF
// persistent-keepalive" (testdata/wg/persistent-keepalive*.txt, recorded on a
// lab's A with the keepalive off and at 25 s).
const natPeer = "tROLzwF4EuHyKknhhZdvYkrEpFqZjHsNiA7uAo9IKzs="

// The keepalive fix planned on wg's recorded output where the tunnel is made:
// wg-quick (the peer's section found by its key, whatever its case), a
// systemd-networkd .netdev, nowhere (runtime only); its undo puts back the
// keepalive read at plan time ("off"), and one already set is done.
func TestKeepaliveFixPlans(t *testing.T) {
	const wgQuick = "[Interface]\nPrivateKey = SECRET\n\n[Peer]\nPublicKey = bmVhcm5lYXJuZWFybmVhcm5lYXJuZWFybmVhcm5lYXI=\nEndpoint = 198.51.100.9:4500\n\n" +
		"[Peer]\npublickey = " + natPeer + "\nAllowedIPs = 10.0.0.2/32\nEndpoint = 203.0.113.2:51820\n"
	const netdev = "[NetDev]\nName=wg0\nKind=wireguard\n\n[WireGuard]\nPrivateKeyFile=/etc/systemd/network/wg0.key\n\n[WireGuardPeer]\nPublicKey=" + natPeer + "\nEndpoint=203.0.113.2:51820\n"
	fix := must(t)(WGPeerKeepalive("wg0", natPeer, 25, Linux))
	set := []string{"wg set wg0 peer " + natPeer + " persistent-keepalive 25"}
	undo := []string{"wg set wg0 peer " + natPeer + " persistent-keepalive off"}
	for _, tc := range []struct {
		name  string
		files map[string]string
		path  string // the file written, "" for none
		want  string // its new content
		note  string
	}{
		{"wg-quick: the peer with that key", map[string]string{"/etc/wireguard/wg0.conf": wgQuick}, "/etc/wireguard/wg0.conf",
			strings.Replace(wgQuick, "[Peer]\npublickey", "[Peer]\nPersistentKeepalive = 25\npublickey", 1), ""},
		{"systemd-networkd", map[string]string{"/etc/systemd/network/50-wg0.netdev": netdev}, "/etc/systemd/network/50-wg0.netdev",
			strings.Replace(netdev, "[WireGuardPeer]\n", "[WireGuardPeer]\nPersistentKeepalive=25\n", 1), "persists: systemd-networkd"},
		{"unmanaged", nil, "", "", "runtime only: no wg-quick config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := targettest.New("ssh:root@a")
			h.On("wg show wg0 persistent-keepalive", strings.ReplaceAll(recordedWG(t, "persistent-keepalive-off.txt"), "wg-kar-a", "wg0"))
			var netdevs []string
			for p, c := range tc.files {
				h.Files[p] = c
				if strings.HasSuffix(p, ".netdev") {
					netdevs = append(netdevs, p)
				}
			}
			h.On(shell.Join("sh", "-c", listNetdevs, "sh", "/etc/systemd/network"), strings.Join(netdevs, "\n"))
			st, err := fix.Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(set, st.Commands); d != "" {
				t.Errorf("commands (-want +got):\n%s", d)
			}
			if d := cmp.Diff(undo, st.Undo); d != "" {
				t.Errorf("undo (-want +got):\n%s", d)
			}
			switch {
			case tc.path == "" && len(st.Files) > 0:
				t.Errorf("files %+v, want none", st.Files)
			case tc.path != "" && (len(st.Files) != 1 || st.Files[0].Path != tc.path):
				t.Fatalf("files %+v, want %s", st.Files, tc.path)
			case tc.path != "":
				if d := cmp.Diff(tc.want, string(st.Files[0].New)); d != "" {
					t.Errorf("%s (-want +got):\n%s", tc.path, d)
				}
			}
			if tc.note != "" && !strings.Contains(strings.Join(st.Notes, "\n"), tc.note) {
				t.Errorf("notes %q, want %q", st.Notes, tc.note)
			}
		})
	}
	// NetworkManager: the connection's keyfile, its peer's own section; a
	// keyfile of NetworkManager's own (/run) is not the owner's.
	const keyfile = "[connection]\nid=office vpn\ntype=wireguard\ninterface-name=wg0\n\n[wireguard]\nprivate-key=SECRET\n\n" +
		"[wireguard-peer." + natPeer + "]\nendpoint=203.0.113.2:51820\nallowed-ips=10.0.0.2/32;\n"
	for _, tc := range []struct {
		list, want string
	}{
		{"Wired connection 1:/run/NetworkManager/system-connections/x.nmconnection\noffice vpn:/etc/NetworkManager/system-connections/office-vpn.nmconnection\n",
			strings.Replace(keyfile, "[wireguard-peer."+natPeer+"]\n", "[wireguard-peer."+natPeer+"]\npersistent-keepalive=25\n", 1)},
		{"office vpn:/run/NetworkManager/system-connections/office-vpn.nmconnection\n", ""},
	} {
		h := targettest.New("ssh:root@a")
		h.On(shell.Join("sh", "-c", listNetdevs, "sh", "/etc/systemd/network"), "")
		h.On("wg show wg0 persistent-keepalive", natPeer+"\toff\n")
		h.On("nmcli -g GENERAL.CONNECTION device show wg0", "office vpn\n")
		h.On("nmcli -g NAME,FILENAME connection show", tc.list)
		h.Files["/etc/NetworkManager/system-connections/office-vpn.nmconnection"] = keyfile
		st, err := fix.Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" {
			if len(st.Files) != 0 || !strings.Contains(strings.Join(st.Notes, "\n"), "runtime only") {
				t.Errorf("NetworkManager's own keyfile: files %+v, notes %q; want runtime only", st.Files, st.Notes)
			}
			continue
		}
		if len(st.Files) != 1 || string(st.Files[0].New) != tc.want || !strings.Contains(strings.Join(st.Notes, "\n"), "persists: NetworkManager") {
			t.Errorf("NetworkManager keyfile: files %+v, notes %q", st.Files, st.Notes)
		}
	}
	// Already 25 s: nothing to do.
	h := targettest.New("ssh:root@a")
	h.On(shell.Join("sh", "-c", listNetdevs, "sh", "/etc/systemd/network"), "")
	h.On("wg show wg0 persistent-keepalive", strings.ReplaceAll(recordedWG(t, "persistent-keepalive.txt"), "wg-kar-a", "wg0"))
	st, err := fix.Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
	if err != nil || !st.Done || len(st.Commands) > 0 {
		t.Errorf("already set: %+v, %v; want done", st, err)
	}
	// A peer the interface does not have is refused.
	h = targettest.New("ssh:root@a")
	h.On("wg show wg0 persistent-keepalive", "bmVhcm5lYXJuZWFybmVhcm5lYXJuZWFybmVhcm5lYXI=\toff\n")
	if _, err := fix.Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux}); err == nil || !strings.Contains(err.Error(), "has no peer") {
		t.Errorf("no such peer: %v", err)
	}
}

// The constructor validates what a findings file may carry.
func TestKeepaliveFixValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"0 s", second(WGPeerKeepalive("wg0", natPeer, 0, Linux))},
		{"65536 s", second(WGPeerKeepalive("wg0", natPeer, 65536, Linux))},
		{"interface -x", second(WGPeerKeepalive("-x", natPeer, 25, Linux))},
		{"a key with a newline", second(WGPeerKeepalive("wg0", natPeer+"\n", 25, Linux))},
		{"seconds with a sign", second(Parse(finding.Action{Kind: KindWGPeerKeepalive, Params: map[string]string{"interface": "wg0", "peer": natPeer, "seconds": "+25"}}))},
	} {
		if tc.err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	r, err := Parse(finding.Action{Kind: KindWGPeerKeepalive, Params: map[string]string{"interface": "wg0", "peer": natPeer, "seconds": "25"}})
	if err != nil || r.Params()["seconds"] != "25" {
		t.Errorf("parse: %v, %v", r, err)
	}
}

// nmcli's terse list escapes a colon inside a name or a path; only an
// owner's keyfile under /etc counts.
func TestNMKeyfile(t *testing.T) {
	list := "a\\:b:/etc/NetworkManager/system-connections/a\\:b.nmconnection\nc:/etc/NetworkManager/system-connections/../../shadow\nd:/run/NetworkManager/d.nmconnection\n"
	for conn, want := range map[string]string{"a:b": "/etc/NetworkManager/system-connections/a:b.nmconnection", "c": "", "d": "", "e": ""} {
		if got := nmKeyfile(list, conn); got != want {
			t.Errorf("%q: %q, want %q", conn, got, want)
		}
	}
}
