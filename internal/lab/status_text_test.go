package lab

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/testutil"
)

// TestWriteStatusGolden holds what "lab status" prints: a multi-WAN lab of
// userspace tunnel ends whose node b stopped, with a delay element, and a
// kernel WireGuard lab.
func TestWriteStatusGolden(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	defer func() { time.Local = local }()
	l := &Lab{Config: Config{Name: "demo", Topology: MultiWAN, WireGuard: Userspace, Underlay: Shape{DelayMs: 6}},
		Created: time.Date(2026, 4, 7, 19, 56, 0, 0, time.UTC), DelayBy: DelayElement}
	st := &Status{
		Nodes: []NodeStatus{
			{Node: Node{Name: "a", Netns: "wgl-demo-a", WGInterface: "wg-demo-a", TunnelAddr: "10.77.0.1", UnderlayAddr: "198.51.100.2", PID: 4242}, Running: true},
			{Node: Node{Name: "r", Netns: "wgl-demo-r"}},
			{Node: Node{Name: "b", Netns: "wgl-demo-b", WGInterface: "wg-demo-b", TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2", PID: 4243}},
		},
		Peers: []PeerStatus{{Interface: "wg-demo-a", PublicKey: "iJAU7xH9N4GOKXnOurLON3PD3JWVqH/E4vF9BDnHhBs=", Endpoint: "203.0.113.2:51820",
			Handshake: "4s ago", RxBytes: 1480, TxBytes: 2960}},
		Shaping: []string{"r eth-a: tbf rate 200Mbit burst 250Kb lat 50ms"},
	}
	var b bytes.Buffer
	if err := l.WriteStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	l.Config.WireGuard, l.Config.Underlay.DelayMs, l.ImplementationNote = Kernel, 0, "the module loads"
	if err := l.WriteStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "status.txt"), b.Bytes())
}
