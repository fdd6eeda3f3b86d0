package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
)

func natSnapshot(t *testing.T, node string) *facts.Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "snapshots", "lab-nat-"+node+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s facts.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// Both ends' views of each other on the recorded NAT lab (B behind R's NAT,
// neither keeps a keepalive), and the line that names a server whose peer's
// AllowedIPs no longer hold the client's address, or that lacks the peer.
func TestUnreachableFacts(t *testing.T) {
	a, b := natSnapshot(t, "a"), natSnapshot(t, "b")
	ep := discover.Endpoints{TunnelAddr: "10.77.0.2", ClientInterface: a.WireGuard[0].Name, ServerInterface: b.WireGuard[0].Name, PeerKey: b.WireGuard[0].PublicKey}
	got := strings.Join(unreachableFacts(a, b, ep), "\n")
	for _, want := range []string{"endpoint 198.51.100.1:51820", "endpoint 198.51.100.2:51820", "keepalive off", "latest handshake"} {
		if !strings.Contains(got, want) {
			t.Errorf("facts lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "drops") {
		t.Errorf("AllowedIPs hold both ends: no drop line wanted:\n%s", got)
	}

	narrow := *b
	narrow.WireGuard = []facts.WGInterface{b.WireGuard[0]}
	narrow.WireGuard[0].Peers = []facts.WGPeer{b.WireGuard[0].Peers[0]}
	narrow.WireGuard[0].Peers[0].AllowedIPs = []string{"10.99.0.0/24"}
	got = strings.Join(unreachableFacts(a, &narrow, ep), "\n")
	if !strings.Contains(got, "allows 10.99.0.0/24, which holds none of "+a.Host.String()+"'s tunnel addresses (10.77.0.1)") {
		t.Errorf("a peer that does not allow the client:\n%s", got)
	}

	none := *b
	none.WireGuard = []facts.WGInterface{b.WireGuard[0]}
	none.WireGuard[0].Peers = nil
	got = strings.Join(unreachableFacts(a, &none, ep), "\n")
	if !strings.Contains(got, "holds no peer for "+a.Host.String()+"'s key") {
		t.Errorf("no peer for the client:\n%s", got)
	}
}

// A bench that could not connect is the status, with its line; a failed
// ping says the tunnel carries nothing, an answered one points at iperf3's port.
func TestUnreachableLine(t *testing.T) {
	u := &Unreachable{Where: "10.77.0.2:5299", Why: "unable to connect to server: Connection timed out"}
	if l := u.line("a", "b"); !strings.HasPrefix(l, "UNREACHABLE: a cannot reach b through the tunnel") || !strings.Contains(l, "carries nothing") {
		t.Errorf("%s", l)
	}
	u.PingAnswered = true
	if l := u.line("a", "b"); !strings.Contains(l, "refuses iperf3's port") {
		t.Errorf("%s", l)
	}
}
