package fix

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/parse"
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
