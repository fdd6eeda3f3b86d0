package scenario

import (
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
)

// The remote users case lowered its WireGuard MTU from 1420 to 1280 and went
// from 5 to 53 Mbit/s, but its own path MTU search later found 1440 fits
// (ping -M do -s 1412 passed, 1420 did not): 1420 was not too large, so the
// step is no evidence of an oversized MTU. Neither the finding that says so,
// its check, nor a scenario may cite the case for it; the lab's oversized MTU
// (1500 on a 1500-byte link) is the tuning guide's 60/80 rule broken.
func TestRemoteUsersMTUStepIsNotAnOversizedMTU(t *testing.T) {
	e, ok := check.Lookup(catalog.MTUTunnelTooLarge)
	if !ok {
		t.Fatal("mtu.tunnel-too-large is not in the catalog")
	}
	if slices.Contains(e.Cases, catalog.CaseRemoteUsers) {
		t.Errorf("mtu.tunnel-too-large cites %q, whose 1420 fit (1440 measured)", catalog.CaseRemoteUsers)
	}
	if strings.Contains(e.Check.Doc, "53 Mbit/s by fixing this") {
		t.Errorf("the check's doc credits the 5 → 53 Mbit/s step to an oversized MTU:\n%s", e.Check.Doc)
	}
	for _, sc := range Catalog {
		if sc.Case == caseRemoteUsers && (sc.Expect == catalog.MTUTunnelTooLarge || slices.Contains(sc.Also, catalog.MTUTunnelTooLarge)) {
			t.Errorf("scenario %s reproduces the remote users case with mtu.tunnel-too-large (lab MTU %d)", sc.Name, sc.Lab.WGMTU)
		}
	}
}
