package collect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestHubRoutesEveryEndpoint collects a hub with 1,000 peers, each at an
// endpoint of its own, through a real shell: every endpoint gets its route.
// The route lookups for all of them once made one "sh -c" argument of about
// 270 KB, past the kernel's 128 KiB for one argument, and the hub's
// endpoint routes were all missing ("argument list too long"); iproute2's
// batch mode looks them all up in one process.
// Without ip's batch mode (BusyBox) each lookup is its own ip, the same routes.
func TestHubRoutesEveryEndpoint(t *testing.T) {
	tools := testutil.HubTools(t, 998)
	t.Run("ip -batch", func(t *testing.T) { hubRoutes(t, targettest.InShell(t, "ssh:root@hub", tools), 0) })
	tools["ip"] = strings.Replace(tools["ip"], `"-j -force -batch -")`, `"no batch mode")`, 1)
	t.Run("one ip each", func(t *testing.T) { hubRoutes(t, targettest.InShell(t, "ssh:root@hub", tools), 1000) })
}

// hubRoutes collects h, which should run ip route get one by one this many times.
func hubRoutes(t *testing.T, h *targettest.Host, each int) {
	s, err := Collect(context.Background(), h, Options{Now: func() time.Time { return testutil.HubRecorded }})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.WireGuard) != 1 || len(s.WireGuard[0].Peers) != 1000 {
		t.Fatalf("collected %d interfaces, want the hub's one with 1000 peers", len(s.WireGuard))
	}
	for _, n := range s.Notes {
		if strings.HasPrefix(n.Source, "ip route get") {
			t.Errorf("note %s: %s", n.Source, n.Message)
		}
	}
	if len(s.Endpoints) != 1000 {
		t.Fatalf("routed %d endpoints, want 1000", len(s.Endpoints))
	}
	last := testutil.HubPeer(997)
	if e := s.Endpoints[999]; e.Peer != last.Key || e.Dev != "eth-a" || e.Gateway != "198.51.100.2" || !strings.HasPrefix(last.Endpoint, e.Endpoint+":") {
		t.Errorf("last endpoint %+v, want %s via 198.51.100.2 on eth-a", e, last.Endpoint)
	}
	n := 0
	for _, line := range h.Ran() {
		n += strings.Count(line, "then ip -j route get ")
	}
	if n != each {
		t.Errorf("ran ip route get one by one %d times, want %d", n, each)
	}
}

// An address ip -batch finds no route for is named by the line number of
// its command in ip's error (as iproute2 6.1 printed it on the lab hub).
func TestBatchFailures(t *testing.T) {
	failed := map[string]string{}
	batchFailures("Error: Network is unreachable\nCommand failed -:2\n", []string{"198.18.0.1", "192.0.2.9", "198.18.0.2"}, failed)
	if len(failed) != 1 || failed["192.0.2.9"] != "Error: Network is unreachable" {
		t.Errorf("failed = %q", failed)
	}
	routes := map[string]facts.EndpointRoute{}
	batchRoutes(`[{"dst":"198.18.0.1","gateway":"198.51.100.2","dev":"eth-a","prefsrc":"198.51.100.1","flags":[],"uid":0,"cache":[]}]
[{"dst":"2001:db8::1","dev":"eth-b","prefsrc":"2001:db8::2","flags":[],"pref":"medium"}]
`, routes)
	if len(routes) != 2 || routes["198.18.0.1"].Gateway != "198.51.100.2" || routes["2001:db8::1"].Dev != "eth-b" {
		t.Errorf("routes = %+v", routes)
	}
}
