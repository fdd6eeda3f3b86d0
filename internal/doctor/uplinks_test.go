package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The multi-WAN lab's router (recorded): a fiber (eth0, metric 10) and a 5G
// backup (eth1, metric 20). With the endpoint's route on the backup the
// tunnel keeps up with the underlay measured beside it (18 of 19 Mbit/s),
// which follows the same route; through eth0 the endpoint takes 191. That
// ranks first and the tunnel is slow; before, the ratio said healthy and
// nothing a passive check sees (a host route added by hand, not netifd's
// static one) explained the crawl.
func TestSlowUplinkRanksFirst(t *testing.T) {
	fs, snaps := checked(t, "lab-multiwan-stale-a")
	ups := uplinks.List(snaps[0])
	if len(ups) != 2 || ups[0].Dev != "eth0" || ups[1].Dev != "eth1" {
		t.Fatalf("uplinks %+v, want eth0 then eth1", ups)
	}
	ups[1].Tunnel, ups[1].Mbit, ups[1].RTTMs = true, 19.1, 25.4
	ups[0].Mbit, ups[0].RTTMs = 191.1, 3.1
	const a = "netns:wgl-fd3-a"
	f := uplinks.Finding(targettest.Spec(a), "203.0.113.2", "wg-fd3-a", ups, 18.3)
	if f == nil || f.ID != catalog.RouteEndpointUplink || !strings.Contains(f.Title, "over eth1 (19.1 Mbit/s) while eth0 reaches it at 191.1") {
		t.Fatalf("finding %+v", f)
	}
	// Each uplink's rate and idle round trip, the case's "25 ms against 3".
	if want := "eth0 191.1 Mbit/s 3.1 ms, eth1 19.1 Mbit/s 25.4 ms (the tunnel's)"; f.Evidence[len(f.Evidence)-1].Value != want {
		t.Errorf("uplinks evidence %q, want %q", f.Evidence[len(f.Evidence)-1].Value, want)
	}
	if len(f.Fixes) == 0 || f.Fixes[0].Action == nil || f.Fixes[0].Action.Params["dev"] != "eth0" || f.Fixes[0].Action.Params["via"] != "198.51.100.1" {
		t.Errorf("fix %+v, want the endpoint routed through eth0 via 198.51.100.1", f.Fixes)
	}
	// Without the stale check's finding (netifd's static route): only the
	// measurement can tell.
	var passive []finding.Finding
	for _, x := range fs {
		if x.ID != catalog.RouteStaleEndpoint {
			passive = append(passive, x)
		}
	}
	m := measured(a, "netns:wgl-fd3-b", 18.3, 19.1, 18.3, 19.1)
	if s := status(passive, m); s == StatusSlow {
		t.Fatalf("status %s without the uplinks: the test would prove nothing", s)
	}
	found := append(passive, *f)
	if got := ids(Rank(found, m)); got[0] != string(catalog.RouteEndpointUplink)+"@"+a {
		t.Errorf("ranked %v, want route.endpoint-uplink first", got)
	}
	if s := status(found, m); s != StatusSlow {
		t.Errorf("status %s, want %s", s, StatusSlow)
	}
	// netifd's static route on the backup is the stale-endpoint case: its
	// finding names the cause, and gets the measurement as evidence.
	stale := finding.Finding{ID: catalog.RouteStaleEndpoint, Severity: finding.Critical, Host: targettest.Spec(a)}
	got := withUplinkFinding([]finding.Finding{stale}, f)
	if len(got) != 1 || got[0].ID != catalog.RouteStaleEndpoint || len(got[0].Evidence) != len(f.Evidence) {
		t.Errorf("with the stale route: %+v", got)
	}
	// Uplinks alike (the ECMP lab's two 100 Mbit/s links): nothing.
	ups[0].Mbit, ups[1].Mbit = 95, 94
	if f := uplinks.Finding(targettest.Spec(a), "203.0.113.2", "wg0", ups, 90); f != nil {
		t.Errorf("uplinks alike: %s", f.Title)
	}
}
