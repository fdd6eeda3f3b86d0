package fix

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The other end of a tunnel is the interface whose peer has this end's key:
// in the lab as recorded (both sites' interfaces in one dump), site B's for
// site A's and back, and none for a key no interface has as a peer.
func TestFarInterface(t *testing.T) {
	wg, err := parse.ParseWGDump(bytes.NewReader(testutil.ReadTestdata(t, "collect", "wg", "dump-lab-ecmp")))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"y/f0CKRu03Rrowo/XtvblpxTBCnIQFP5nnT+HSWdJWI=": "wg-e37-b",
		"YG+cE2Ndc+xBtuyWRpDyQ/BwjAEKYJNxOsEbQ4DE0lg=": "wg-e37-a",
	} {
		if got, err := farInterface(wg, key, "far", "wg0"); got != want || err != nil {
			t.Errorf("%s: %q, %v; want %s", key, got, err, want)
		}
	}
	if _, err := farInterface(wg, "3VmR7PSHrDkAhmTMaC7TLTAYh9sZMcmjDXcUK8OWDHA=", "far", "wg0"); err == nil || !strings.Contains(err.Error(), "0 WireGuard interfaces") {
		t.Errorf("a key no interface knows: %v", err)
	}
}

// ecmpSite is a site of the multi-wan lab as recorded, with the public key
// its new tunnel's private key gives (wg pubkey, on the host).
func ecmpSite(t *testing.T, site, newKey string) *targettest.Host {
	h := newFakeHost("netns:wgl-e37-" + site)
	h.On("uname -r", "6.1.0-18-amd64\n")
	h.Fail("sh -c 'command -v nft'", 1)
	h.On("wg show all dump", string(testutil.ReadTestdata(t, "collect", "wg", "dump-lab-ecmp")))
	h.On("ip -j route", string(testutil.ReadTestdata(t, "collect", "ip", "route-lab-ecmp-"+site+".json")))
	h.Files["/sys/class/net/wg-e37-"+site+"/mtu"] = "1420\n"
	h.Files["/proc/sys/net/ipv4/fib_multipath_hash_policy"] = "0\n"
	other := map[string]string{"a": "203.0.113.2", "b": "198.51.100.2"}[site]
	h.On("ip -j route get "+other, string(testutil.ReadTestdata(t, "collect", "ip", "route-get-lab-ecmp-"+site+".json")))
	h.Fallback = func(line string) (targettest.Answer, bool) {
		if strings.Contains(line, "wg show wg-e37-"+site+" private-key") && strings.HasSuffix(line, "| wg pubkey'") {
			return targettest.Answer{Out: newKey + "\n"}, true
		}
		return targettest.Answer{}, false
	}
	return h
}

// TestECMPPlanBothEndsGolden: "fix ecmp --server" without --apply reads both
// sites and shows each end's half, the far end's first, naming the other
// end's new public key; nothing runs on either host but reads.
func TestECMPPlanBothEndsGolden(t *testing.T) {
	ctx := context.Background()
	a := ecmpSite(t, "a", "deOAUQJsI0IrLN6AfBAuAednsG2d+2NNtZA78s+v3is=")
	b := ecmpSite(t, "b", "3VmR7PSHrDkAhmTMaC7TLTAYh9sZMcmjDXcUK8OWDHA=")
	out, err := RunECMP(ctx, ECMPPair{Near: Host{T: a}, Far: Host{T: b}, Interface: "wg-e37-a", Tunnels: 2})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := out.ECMPResult().WriteText(&text); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "ecmp-both-ends.txt"), text.Bytes())
	for _, h := range []*targettest.Host{a, b} {
		for _, line := range h.Ran() {
			for _, change := range []string{"ip link add", "wg set", "ip route replace", "sysctl -qw", "ip address add"} {
				if strings.Contains(line, change) {
					t.Errorf("%s: planning ran %s", h, line)
				}
			}
		}
	}
}

// TestECMPPortsSpreadOverABond: where site A's uplink is a bond of two
// slaves hashing layer3+4, both halves take the ports remedy.SpreadPorts
// chose (the consecutive ones would leave A by one slave), each end's
// listen ports the other's endpoint ports; without a bond, the usual ones.
func TestECMPPortsSpreadOverABond(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name              string
		bond              bool
		nearPort, farPort string
	}{
		{"no bond", false, "", ""},
		{"a bond of 2 at site A", true, "51822", "51821"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := ecmpSite(t, "a", "deOAUQJsI0IrLN6AfBAuAednsG2d+2NNtZA78s+v3is=")
			b := ecmpSite(t, "b", "3VmR7PSHrDkAhmTMaC7TLTAYh9sZMcmjDXcUK8OWDHA=")
			if tc.bond {
				// sysfs as the bonding driver prints it (name and number)
				a.Files["/sys/class/net/eth0/bonding/mode"] = "802.3ad 4\n"
				a.Files["/sys/class/net/eth0/bonding/xmit_hash_policy"] = "layer3+4 1\n"
				a.Files["/sys/class/net/eth0/bonding/slaves"] = "eno1 eno2\n"
			}
			nr, fr, err := ECMPRequests(ctx, ECMPPair{Near: Host{T: a, Root: "/"}, Far: Host{T: b, Root: "/"}, Interface: "wg-e37-a", Tunnels: 2})
			if err != nil {
				t.Fatal(err)
			}
			np, fp := nr.Findings[0].Fixes[0].Action.Params, fr.Findings[0].Fixes[0].Action.Params
			if np["ports"] != tc.nearPort || np["peer_ports"] != tc.farPort || fp["ports"] != tc.farPort || fp["peer_ports"] != tc.nearPort {
				t.Errorf("near %v, far %v; want ports %q here, %q there", np, fp, tc.nearPort, tc.farPort)
			}
		})
	}
}
