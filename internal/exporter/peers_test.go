package exporter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
)

const (
	keyA = "eLo3dHD5do7fyVrYpJ6odLF+TdPwVLNB2HIekkgiAFU="
	keyB = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="
	keyC = "TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0="
)

func TestParsePeerNames(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     PeerNames
		err      string
	}{
		{name: "wg-quick comments", in: `[Interface]
PrivateKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=
# Name = not a peer
Address = 10.0.0.1/24

[Peer]
# Name = laptop
PublicKey = ` + keyA + `
AllowedIPs = 10.0.0.2/32

# friendly_name = Office router (Berlin)
[Peer]
PublicKey = ` + keyB + `

[Peer]
PublicKey = ` + keyC + `
`, want: PeerNames{keyA: "laptop", keyB: "Office router (Berlin)"}},
		{name: "list", in: "# key name\n" + keyA + " laptop\n" + keyB + "   phone of Ana\n",
			want: PeerNames{keyA: "laptop", keyB: "phone of Ana"}},
		{name: "not a key", in: "golem laptop\n", err: "line 1"},
		{name: "bad key in peer", in: "[Peer]\nPublicKey = abc\n", err: `"abc" is not a WireGuard public key`},
		{name: "control character", in: keyA + " lap\x1btop\n", err: "control character"},
		{name: "too long", in: keyA + " " + strings.Repeat("x", 65) + "\n", err: "longer than 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PeerNames{}
			err := parsePeerNames(strings.NewReader(tc.in), got)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
		})
	}
}

// A peer roaming through many networks (or a NAT rebinding its port) adds at
// most MaxEndpoints+1 endpoint series per hour.
func TestEndpointChurnIsBounded(t *testing.T) {
	snap := readFixture(t, "multiwan-a.json")
	if len(snap.WireGuard) == 0 || len(snap.WireGuard[0].Peers) == 0 {
		t.Fatal("fixture has no peer")
	}
	e := newLocal()
	e.opts.Names = PeerNames{snap.WireGuard[0].Peers[0].PublicKey: "site b"}
	series := map[string]bool{}
	start := snap.CollectedAt
	for i := range 60 { // one collection a minute for an hour, a new address and port each time
		s := *snap
		s.CollectedAt = start.Add(time.Duration(i) * time.Minute)
		wg := s.WireGuard[0]
		wg.Peers = append([]facts.WGPeer(nil), wg.Peers...)
		wg.Peers[0].Endpoint = fmt.Sprintf("192.0.2.%d:%d", i+1, 40000+i)
		s.WireGuard = []facts.WGInterface{wg}
		e.store(&s, check.Result{}, time.Second, nil)
		text := scrape(t, e)
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "wgperf_wireguard_peer_endpoint_info{") || strings.HasPrefix(line, "wgperf_wireguard_peer_info{") {
				series[line] = true
			}
		}
		if i == 0 && !strings.Contains(text, `name="site b"`) {
			t.Fatalf("peer name missing:\n%s", text)
		}
		if port := sampleValue(t, text, `wgperf_wireguard_peer_endpoint_port{interface="`+wg.Name+`",peer="`+wg.Peers[0].PublicKey+`"}`); port != float64(40000+i) {
			t.Fatalf("collection %d: port %v", i, port)
		}
	}
	endpoints := 0
	for s := range series {
		if strings.HasPrefix(s, "wgperf_wireguard_peer_endpoint_info{") {
			endpoints++
		}
	}
	if endpoints != MaxEndpoints+1 {
		t.Errorf("60 addresses in an hour made %d endpoint series, want %d:\n%v", endpoints, MaxEndpoints+1, series)
	}
	// An hour after the first addresses the window admits new ones again.
	l := newRoamLimiter()
	t0 := time.Now()
	for i := range MaxEndpoints {
		l.label("wg0", keyA, fmt.Sprint(i), t0)
	}
	if got := l.label("wg0", keyA, "new", t0.Add(time.Minute)); got != roamingLabel {
		t.Errorf("fifth address within the hour: %q, want %q", got, roamingLabel)
	}
	if got := l.label("wg0", keyA, "new", t0.Add(EndpointWindow)); got != "new" {
		t.Errorf("new address after the window: %q", got)
	}
	l.keep(map[[2]string]bool{})
	if len(l.peers) != 0 {
		t.Errorf("limiter keeps %d peers that are gone", len(l.peers))
	}
}

func TestSplitEndpoint(t *testing.T) {
	for in, want := range map[string]struct {
		addr string
		port int
	}{
		"203.0.113.2:51820":      {"203.0.113.2", 51820},
		"[2001:db8::1]:51820":    {"2001:db8::1", 51820},
		"":                       {"", 0},
		"(none)":                 {"", 0},
		"host-without-port-ever": {"host-without-port-ever", 0},
	} {
		if a, p := splitEndpoint(in); a != want.addr || p != want.port {
			t.Errorf("splitEndpoint(%q) = %q, %d", in, a, p)
		}
	}
}

// OpenWrt keeps peers in /etc/config/network; LuCI's "Description" is the name.
func TestReadPeerNamesFromOpenWrt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "network")
	uci := `
config interface 'wg0'
	option proto 'wireguard'
	option private_key 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk='
	option description 'not a peer'

config wireguard_wg0
	option description 'Office router (Berlin)'
	option public_key '` + keyA + `'
	list allowed_ips '10.0.0.2/32'

config wireguard_wg0 'phone'
	option public_key "` + keyB + `"
	option description "phone of Ana"

config wireguard_wg0
	option public_key '` + keyC + `'
`
	if err := os.WriteFile(path, []byte(uci), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPeerNames(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(PeerNames{keyA: "Office router (Berlin)", keyB: "phone of Ana"}, got); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	// A router's own file must never stop the exporter: unusable entries stay unnamed.
	bad := "config wireguard_wg0\n\toption public_key 'nope'\n\toption description 'x'\n" +
		"config wireguard_wg0\n\toption public_key '" + keyA + "'\n\toption description '" + strings.Repeat("x", 80) + "'\n" +
		"config wireguard_wg0\n\toption public_key '" + keyB + "'\n\toption description 'ok'\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = ReadPeerNames(path)
	if err != nil || !cmp.Equal(got, PeerNames{keyB: "ok"}) {
		t.Errorf("names %v, error %v; want only %s named", got, err, keyB)
	}
}
