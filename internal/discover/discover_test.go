package discover

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// Recorded in a lab "wgb0" while another lab ("lc") was up: wg show all dump in
// one namespace lists both labs' userspace interfaces.
func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "probe"}, parts...)...)
}

func loadNode(t *testing.T, node string) ([]facts.WGInterface, []Link) {
	t.Helper()
	return loadRecorded(t, "", node)
}

// loadHubNode reads a node of the hub lab's recordings (hub-*).
func loadHubNode(t *testing.T, node string) ([]facts.WGInterface, []Link) {
	t.Helper()
	return loadRecorded(t, "hub-", node)
}

func loadRecorded(t *testing.T, prefix, node string) ([]facts.WGInterface, []Link) {
	t.Helper()
	f, err := os.Open(testdata("discover", prefix+"wg-dump-"+node+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wg, err := parse.ParseWGDump(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(testdata("discover", prefix+"ip-addr-"+node+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	links, err := parse.ParseIPAddr(g)
	if err != nil {
		t.Fatal(err)
	}
	return wg, links
}

func TestMatch(t *testing.T) {
	aWG, aLinks := loadNode(t, "a")
	bWG, bLinks := loadNode(t, "b")
	if len(aWG) != 4 {
		t.Fatalf("the dump holds %d interfaces, want 4 (two labs)", len(aWG))
	}
	got, err := Match(aWG, aLinks, bWG, bLinks)
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoints{TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2", ClientInterface: "wg-wgb0-a", ServerInterface: "wg-wgb0-b", ClientPort: 51820, ServerPort: 51820,
		PeerKey: "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA=", EndpointPort: 51820}
	if got != want {
		t.Errorf("a -> b: %+v, want %+v", got, want)
	}
	got, err = Match(bWG, bLinks, aWG, aLinks)
	if err != nil {
		t.Fatal(err)
	}
	want = Endpoints{TunnelAddr: "10.77.0.1", UnderlayAddr: "198.51.100.2", ClientInterface: "wg-wgb0-b", ServerInterface: "wg-wgb0-a", ClientPort: 51820, ServerPort: 51820,
		PeerKey: "ivpQfAnA2IBwVtgoAVHCDCw5DTVjP0nEtB89t9aoW0c=", EndpointPort: 51820}
	if got != want {
		t.Errorf("b -> a: %+v, want %+v", got, want)
	}
	// A client whose WireGuard interfaces all live in other namespaces has none.
	var nf *NotFoundError
	if _, err := Match(aWG, []Link{{Name: "lo"}}, bWG, bLinks); !errors.As(err, &nf) || !strings.Contains(err.Error(), "no WireGuard interface") {
		t.Errorf("no interface on the client: err = %v, want a NotFoundError", err)
	}
	// A server that is none of the client's peers.
	if _, err := Match(aWG, aLinks, nil, []Link{{Name: "eth0", Addrs: []string{"192.0.2.9"}}}); err == nil {
		t.Error("unrelated server: want an error")
	}
}

// BusyBox ip's text of a lab router node finds the same tunnel as iproute2's
// JSON of the same namespace (testdata/collect/busybox/ip-addr.*).
func TestMatchFromBusyBoxText(t *testing.T) {
	read := func(name string, parse func(io.Reader) ([]Link, error)) []Link {
		t.Helper()
		f, err := os.Open(filepath.Join("..", "..", "testdata", "collect", "busybox", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		links, err := parse(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return links
	}
	text := read("ip-addr.txt", parse.ParseIPAddrText)
	if d := cmp.Diff(read("ip-addr.json", parse.ParseIPAddr), text); d != "" {
		t.Fatalf("BusyBox text and iproute2 JSON differ (-json +text):\n%s", d)
	}
	router := []facts.WGInterface{{Name: "wg_rtrec_a", PublicKey: "A=", Peers: []facts.WGPeer{{PublicKey: "B=", Endpoint: "203.0.113.2:51820", AllowedIPs: []string{"10.77.0.2/32"}}}}}
	server := []facts.WGInterface{{Name: "wg-b", PublicKey: "B=", Peers: []facts.WGPeer{{PublicKey: "A=", Endpoint: "198.51.100.2:51820"}}}}
	serverLinks := []Link{{Name: "eth0", Addrs: []string{"203.0.113.2"}}, {Name: "wg-b", Addrs: []string{"10.77.0.2"}}}
	got, err := Match(server, serverLinks, router, text)
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoints{TunnelAddr: "10.77.0.1", UnderlayAddr: "198.51.100.2", ClientInterface: "wg-b", ServerInterface: "wg_rtrec_a", PeerKey: "A=", EndpointPort: 51820}
	if got != want {
		t.Errorf("server -> router: %+v, want %+v", got, want)
	}
}

// Recorded in the lab's hub topology ("wgperf lab up --name hubrec
// --hub-rate 50"): A's and B's one peer is the hub R (AllowedIPs the whole
// tunnel network), so A holds no peer for B. The tunnel to B's address runs
// through R, whose key both spokes name; the hub itself is a direct peer.
func TestMatchThroughHub(t *testing.T) {
	aWG, aLinks := loadHubNode(t, "a")
	bWG, bLinks := loadHubNode(t, "b")
	rWG, rLinks := loadHubNode(t, "r")
	const hubKey = "eDtuBDf/sB2eZ67r3eenUFfKFDzKcekO6v3nZMHqqHk="
	got, err := Match(aWG, aLinks, bWG, bLinks)
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoints{TunnelAddr: "10.77.0.2", ClientInterface: "wg-hubrec-a", ServerInterface: "wg-hubrec-b", ClientPort: 51820, ServerPort: 51820,
		PeerKey: hubKey, EndpointPort: 51820,
		Hub: Hub{Endpoint: "198.51.100.1:51820", PublicKey: hubKey, Allowed: "10.77.0.0/24", ServerEndpoint: "203.0.113.1:51820", ServerKey: hubKey}}
	if got != want {
		t.Errorf("a -> b:\n got %+v\nwant %+v", got, want)
	}
	if !got.Hub.Found() || !got.Hub.Same() || got.Hub.Addr() != "198.51.100.1" {
		t.Errorf("hub %+v: found %v, same %v, addr %q", got.Hub, got.Hub.Found(), got.Hub.Same(), got.Hub.Addr())
	}
	// The hub is the spoke's direct peer: no hub between them.
	direct, err := Match(aWG, aLinks, rWG, rLinks)
	if err != nil || direct.Hub.Found() || direct.UnderlayAddr != "198.51.100.1" || direct.TunnelAddr != "10.77.0.3" {
		t.Errorf("a -> hub: %+v, %v; want the direct tunnel", direct, err)
	}
	// A peer whose AllowedIPs cover nothing of the server's is no hub.
	narrow := []facts.WGInterface{{Name: "wg-hubrec-a", Peers: []facts.WGPeer{{PublicKey: hubKey, Endpoint: "198.51.100.1:51820", AllowedIPs: []string{"10.77.0.3/32"}}}}}
	if ep, err := Match(narrow, aLinks, bWG, bLinks); err == nil {
		t.Errorf("no peer carries B: %+v, want an error", ep)
	}
}

// WireGuard sends to the peer with the longest matching AllowedIPs: the hub
// found is that peer, not the first that covers the server.
func TestMatchHubLongestPrefix(t *testing.T) {
	client := []facts.WGInterface{{Name: "wg0", Peers: []facts.WGPeer{
		{PublicKey: "wide=", Endpoint: "192.0.2.1:51820", AllowedIPs: []string{"0.0.0.0/0"}},
		{PublicKey: "hub=", Endpoint: "192.0.2.2:51820", AllowedIPs: []string{"10.8.0.0/16", "fd00::/64"}},
	}}}
	clientLinks := []Link{{Name: "wg0", Addrs: []string{"10.8.1.5", "fe80::1"}}, {Name: "eth0", Addrs: []string{"198.51.100.7"}}}
	server := []facts.WGInterface{{Name: "wg1", Peers: []facts.WGPeer{{PublicKey: "hub=", Endpoint: "192.0.2.2:51820", AllowedIPs: []string{"10.8.0.0/16"}}}}}
	serverLinks := []Link{{Name: "wg1", Addrs: []string{"fe80::2", "10.8.2.9"}}, {Name: "eth0", Addrs: []string{"203.0.113.9"}}}
	got, err := Match(client, clientLinks, server, serverLinks)
	if err != nil {
		t.Fatal(err)
	}
	if got.TunnelAddr != "10.8.2.9" || got.Hub.PublicKey != "hub=" || got.Hub.Allowed != "10.8.0.0/16" || !got.Hub.Same() || got.UnderlayAddr != "" {
		t.Errorf("got %+v", got)
	}
}
