package remedy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// farKey is the far end's public key in the recorded "wg show endpoints".
// testdata/wg was recorded in a lab (lab up --port-police 25 --client-port
// 51900): listen-port.txt on B, endpoints.txt on A, whose peer is B.
const farKey = "sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs="

// recordedWG reads an output of wg recorded in a lab (testdata/wg).
func recordedWG(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wg", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The port fix's two kinds, planned on wg's recorded outputs where the
// tunnel is made: wg-quick, systemd-networkd, nowhere (runtime only). The
// undo puts back the port and endpoint read at plan time, the file comes
// back from its old content, and the printed script's edit (the file holds
// keys, so it is never printed whole) makes the same file the plan writes.
func TestPortFixPlans(t *testing.T) {
	const wgQuick = "[Interface]\nPrivateKey = SECRET\nListenPort = 51820\n\n[Peer]\nPublicKey = bmVhcm5lYXJuZWFybmVhcm5lYXJuZWFybmVhcm5lYXI=\nEndpoint = 198.51.100.9:4500\n\n" +
		"[Peer]\npublickey = " + farKey + "\nAllowedIPs = 10.0.0.2/32\nEndpoint = 203.0.113.2:51820\n"
	const netdev = "[NetDev]\nName=wg0\nKind=wireguard\n\n[WireGuard]\nPrivateKeyFile=/etc/systemd/network/wg0.key\n\n[WireGuardPeer]\nPublicKey=" + farKey + "\nEndpoint=203.0.113.2:51820\n"
	port := must(t)(WGListenPort("wg0", 51821, Linux, ""))
	endpoint := must(t)(WGPeerEndpoint("wg0", farKey, "203.0.113.2:51821", Linux))
	for _, tc := range []struct {
		name     string
		r        Remedy
		files    map[string]string
		commands []string
		undo     []string
		path     string // the file written, "" for none
		want     string // its new content
		note     string
	}{
		{"listen port, wg-quick", port, map[string]string{"/etc/wireguard/wg0.conf": wgQuick},
			[]string{"wg set wg0 listen-port 51821"}, []string{"wg set wg0 listen-port 51820"},
			"/etc/wireguard/wg0.conf", strings.Replace(wgQuick, "ListenPort = 51820", "ListenPort = 51821", 1), ""},
		{"endpoint, wg-quick: the peer with that key", endpoint, map[string]string{"/etc/wireguard/wg0.conf": wgQuick},
			[]string{"wg set wg0 peer " + farKey + " endpoint 203.0.113.2:51821"}, []string{"wg set wg0 peer " + farKey + " endpoint 203.0.113.2:51820"},
			"/etc/wireguard/wg0.conf", strings.Replace(wgQuick, "Endpoint = 203.0.113.2:51820", "Endpoint = 203.0.113.2:51821", 1), ""},
		{"listen port, systemd-networkd: inserted in [WireGuard]", port, map[string]string{"/etc/systemd/network/50-wg0.netdev": netdev},
			[]string{"wg set wg0 listen-port 51821"}, []string{"wg set wg0 listen-port 51820"},
			"/etc/systemd/network/50-wg0.netdev", strings.Replace(netdev, "[WireGuard]\n", "[WireGuard]\nListenPort=51821\n", 1),
			"persists: systemd-networkd creates wg0 from /etc/systemd/network/50-wg0.netdev at boot, with ListenPort=51821"},
		{"endpoint, systemd-networkd", endpoint, map[string]string{"/etc/systemd/network/50-wg0.netdev": netdev},
			[]string{"wg set wg0 peer " + farKey + " endpoint 203.0.113.2:51821"}, []string{"wg set wg0 peer " + farKey + " endpoint 203.0.113.2:51820"},
			"/etc/systemd/network/50-wg0.netdev", strings.Replace(netdev, "Endpoint=203.0.113.2:51820", "Endpoint=203.0.113.2:51821", 1), "persists: systemd-networkd"},
		{"listen port, unmanaged", port, nil, []string{"wg set wg0 listen-port 51821"}, []string{"wg set wg0 listen-port 51820"}, "", "",
			"runtime only: no wg-quick config, systemd-networkd .netdev or uci section for wg0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := targettest.New("ssh:root@b")
			h.On("wg show wg0 listen-port", recordedWG(t, "listen-port.txt"))
			h.On("wg show wg0 endpoints", recordedWG(t, "endpoints.txt"))
			var netdevs []string
			for p, data := range tc.files {
				h.Files[p] = data
				if strings.HasSuffix(p, ".netdev") {
					netdevs = append(netdevs, p)
				}
			}
			h.On(shell.Join("sh", "-c", listNetdevs, "sh", "/etc/systemd/network"), strings.Join(netdevs, "\n"))
			st, err := tc.r.Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.commands, st.Commands); d != "" {
				t.Errorf("commands (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.undo, st.Undo); d != "" {
				t.Errorf("undo (-want +got):\n%s", d)
			}
			// Each half says the other must follow; wg-quick needs no other note.
			if n := strings.Join(st.Notes, "\n"); !strings.Contains(n, tc.note) || !strings.Contains(n, bothHalves) || (tc.note == "" && n != bothHalves) {
				t.Errorf("notes %q, want %q and that the other half must follow", n, tc.note)
			}
			if tc.path == "" {
				if len(st.Files) != 0 {
					t.Errorf("files %+v", st.Files)
				}
				return
			}
			if len(st.Files) != 1 || st.Files[0].Path != tc.path || string(st.Files[0].Old) != tc.files[tc.path] || !st.Files[0].Existed {
				t.Fatalf("files %+v", st.Files)
			}
			if d := cmp.Diff(tc.want, string(st.Files[0].New)); d != "" {
				t.Errorf("new %s (-want +got):\n%s", tc.path, d)
			}
			// The printed script's edit, run on a copy, makes the same file.
			tmp := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(tmp, []byte(tc.files[tc.path]), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, e := range st.Files[0].Edit {
				line := strings.ReplaceAll(e, shell.Join(tc.path+".wgperf"), shell.Join(tmp+".wgperf"))
				line = strings.ReplaceAll(line, shell.Join(tc.path), shell.Join(tmp))
				if out, err := exec.Command("sh", "-c", line).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v: %s", line, err, out)
				}
			}
			if got, _ := os.ReadFile(tmp); string(got) != tc.want {
				t.Errorf("the script's edit makes (-want +got):\n%s", cmp.Diff(tc.want, string(got)))
			}
		})
	}
}

// A peer the interface does not have, or one without an endpoint (whose
// endpoint wg set could not take away again), is refused at plan time.
func TestPeerEndpointRefuses(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"bmVhcm5lYXJuZWFybmVhcm5lYXJuZWFybmVhcm5lYXI=\t198.51.100.9:4500\n", "has no peer"},
		{farKey + "\t(none)\n", "has no endpoint"},
	} {
		h := targettest.New("ssh:root@a")
		h.On("wg show wg0 endpoints", tc.out)
		_, err := must(t)(WGPeerEndpoint("wg0", farKey, "203.0.113.2:51821", Linux)).Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.out, err, tc.want)
		}
	}
}

// The constructors validate what a findings file may carry.
func TestPortFixValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"port 0", second(WGListenPort("wg0", 0, Linux, ""))},
		{"port 65536", second(WGListenPort("wg0", 65536, Linux, ""))},
		{"interface -x", second(WGListenPort("-x", 51821, Linux, ""))},
		{"a key of 31 bytes", second(WGPeerEndpoint("wg0", "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1g==", "203.0.113.2:51821", Linux))},
		{"a key with a newline", second(WGPeerEndpoint("wg0", farKey+"\n", "203.0.113.2:51821", Linux))},
		{"a private-looking key of 33 bytes", second(WGPeerEndpoint("wg0", farKey+"AAAA", "203.0.113.2:51821", Linux))},
		{"a host name", second(WGPeerEndpoint("wg0", farKey, "vpn.example.org:51821", Linux))},
		{"port 0 endpoint", second(WGPeerEndpoint("wg0", farKey, "203.0.113.2:0", Linux))},
		{"no port", second(WGPeerEndpoint("wg0", farKey, "203.0.113.2", Linux))},
		{"IPv6 without brackets", second(WGPeerEndpoint("wg0", farKey, "2001:db8::2:51821", Linux))},
		{"IPv6 with a zone", second(WGPeerEndpoint("wg0", farKey, "[fe80::1%eth0]:51821", Linux))},
		{"a leading zero", second(WGPeerEndpoint("wg0", farKey, "203.0.113.2:051821", Linux))},
	} {
		if tc.err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := WGPeerEndpoint("wg0", farKey, "[2001:db8::2]:51821", Linux); err != nil {
		t.Errorf("[v6]:port refused: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
