package discover

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/testutil"
)

// hubState is the lab hub with 998 more peers (testutil.HubDump) and spoke
// B, as 'wg show all dump' and 'ip -j addr' showed them in their namespaces.
func hubState(t *testing.T) (hubWG []facts.WGInterface, hubLinks []Link, bWG []facts.WGInterface, bLinks []Link) {
	t.Helper()
	var err error
	if hubWG, err = parse.ParseWGDump(bytes.NewReader(testutil.HubDump(t, 998))); err != nil {
		t.Fatal(err)
	}
	if bWG, err = parse.ParseWGDump(testutil.OpenTestdata(t, "collect", "hub", "spoke-b-wg-dump")); err != nil {
		t.Fatal(err)
	}
	if hubLinks, err = parse.ParseIPAddr(testutil.OpenTestdata(t, "collect", "hub", "ip-addr.json")); err != nil {
		t.Fatal(err)
	}
	if bLinks, err = parse.ParseIPAddr(testutil.OpenTestdata(t, "collect", "hub", "spoke-b-ip-addr.json")); err != nil {
		t.Fatal(err)
	}
	return hubWG, hubLinks, bWG, bLinks
}

// On a hub with 1,000 peers the server's peer is the one with its key, even
// when it comes last and road warriors behind the server's NAT (their
// endpoint is the server's address, on ports of their own) come first.
func TestMatchPicksTheHubsPeerOfTheServer(t *testing.T) {
	hubWG, hubLinks, bWG, bLinks := hubState(t)
	want := Endpoints{TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2", ClientInterface: "wg-mpeer-r", ServerInterface: "wg-mpeer-b",
		ClientPort: 51820, ServerPort: 51820, PeerKey: "OrbnkZQTcIKMN+4UfK1UzKE0YR+xK58VTS6DGxq4sBw=", EndpointPort: 51820}
	got, err := Match(hubWG, hubLinks, bWG, bLinks)
	if err != nil || got != want {
		t.Errorf("hub -> B as recorded: %+v, %v; want %+v", got, err, want)
	}
	peers := hubWG[0].Peers
	b := peers[1]
	peers = append(append(peers[:1:1], peers[2:]...), b) // B added last
	for i := 1; i <= 10; i++ {
		peers[i].Endpoint = fmt.Sprintf("203.0.113.2:%d", 40000+i)
	}
	hubWG[0].Peers = peers
	got, err = Match(hubWG, hubLinks, bWG, bLinks)
	if err != nil || got != want {
		t.Errorf("hub -> B last, behind it 10 road warriors first: %+v, %v; want %+v", got, err, want)
	}
	// Without B's key (its WireGuard not read), the peer whose allowed IPs
	// hold B's tunnel address, not the first at B's address.
	got, err = Match(hubWG, hubLinks, nil, bLinks)
	if want := (Endpoints{TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2", ClientInterface: "wg-mpeer-r", ClientPort: 51820,
		PeerKey: "OrbnkZQTcIKMN+4UfK1UzKE0YR+xK58VTS6DGxq4sBw=", EndpointPort: 51820}); err != nil || got != want {
		t.Errorf("hub -> B without B's key: %+v, %v; want %+v", got, err, want)
	}
}
