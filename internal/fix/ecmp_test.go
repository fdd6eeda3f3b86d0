package fix

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanECMPGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "fix", "wg0-site-a.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conf, err := ParseWGQuick(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanECMP(ECMPInput{Interface: "wg0", Conf: conf, Tunnels: 2, Bonds: map[string]string{"bond0": "layer2"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "SECRET") {
		t.Error("the ECMP plan repeats the private key")
	}
	golden(t, "ecmp-2-tunnels.txt", out.String())
}

func TestPlanECMPErrors(t *testing.T) {
	conf := &WGQuickConf{Address: []string{"10.77.0.1/24"}, ListenPort: 51820,
		Peers: []WGQuickPeer{{PublicKey: "k", Endpoint: "203.0.113.2:51820", AllowedIPs: []string{"10.77.0.2/32"}}}}
	for _, tc := range []struct {
		name string
		in   ECMPInput
		want string
	}{
		{"one tunnel", ECMPInput{Interface: "wg0", Conf: conf, Tunnels: 1}, "want 2..16"},
		{"no remote network", ECMPInput{Interface: "wg0", Conf: conf, Tunnels: 2}, "--network"},
		{"two peers", ECMPInput{Interface: "wg0", Conf: &WGQuickConf{ListenPort: 1, Peers: make([]WGQuickPeer, 2)}, Tunnels: 2}, "exactly one peer"},
	} {
		if _, err := PlanECMP(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	for _, bad := range []string{
		"ListenPort 5\n",
		"[Peer]\nPublicKey = cGVlcjE=\n", // 5 bytes, not a key
		"[Peer]\nPublicKey = cHVibGlja2V5cHVibGlja2V5cHVibGlja2V5cHViMDA= ; id\n",
		"[Peer]\nPersistentKeepalive = 25; reboot\n",
		"[Peer]\nPersistentKeepalive = 70000\n",
	} {
		if _, err := ParseWGQuick(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseWGQuick accepted %q", bad)
		}
	}
}

// The configs to install by hand take the other end's address as the change
// on a running host does (remedy.PeerTunnelAddr): where this end's own /32
// comes first among the peer's allowed IPs, the new tunnel's peer address
// is the other end's (10.77.1.2), not this end's again (10.77.1.1); where
// the allowed IPs name no address of the other end, the plan says so
// rather than guessing the next address after this end's.
func TestPlanECMPPeerAddress(t *testing.T) {
	conf := func(allowed ...string) *WGQuickConf {
		return &WGQuickConf{Address: []string{"10.77.0.1/24"}, ListenPort: 51820,
			Peers: []WGQuickPeer{{PublicKey: "k", Endpoint: "203.0.113.2:51820", AllowedIPs: allowed}}}
	}
	p, err := PlanECMP(ECMPInput{Interface: "wg0", Conf: conf("10.77.0.1/32", "10.77.0.2/32", "192.168.20.0/24"), Tunnels: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Configs) != 2 || !strings.Contains(p.Configs[1].Text, "AllowedIPs = 10.77.0.1/32, 10.77.0.2/32, 192.168.20.0/24, 10.77.1.2/32\n") {
		t.Errorf("configs %+v: want the other end's 10.77.1.2 allowed on the new tunnel", p.Configs)
	}
	_, err = PlanECMP(ECMPInput{Interface: "wg0", Conf: conf("10.77.0.0/24", "192.168.20.0/24"), Tunnels: 2})
	if err == nil || !strings.Contains(err.Error(), "wg0's peer has no /32 inside 10.77.0.0/24") {
		t.Errorf("allowed IPs with the whole subnet only: %v, want the error", err)
	}
}
