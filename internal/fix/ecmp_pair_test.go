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
