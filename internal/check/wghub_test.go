package check

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// hubSnapshot is the lab hub's recorded dump with extra offline peers
// (testutil.HubDump), at the moment it was taken.
func hubSnapshot(t *testing.T, extra int) *facts.Snapshot {
	t.Helper()
	wg, err := parse.ParseWGDump(bytes.NewReader(testutil.HubDump(t, extra)))
	if err != nil {
		t.Fatal(err)
	}
	s := healthyHost()
	s.Host, s.CollectedAt, s.WireGuard = targettest.Spec("ssh:root@hub"), testutil.HubRecorded, wg
	return s
}

// assertHubStale holds the two findings of a hub's extra offline peers: every
// fifth keeps a keepalive (down, critical), the rest are idle (info); the
// text names five, the evidence every one.
func assertHubStale(t *testing.T, fs []finding.Finding, extra int) {
	t.Helper()
	down := (extra + 4) / 5
	idle := extra - down
	for i, want := range []struct {
		n     int
		title string
	}{
		{down, fmt.Sprintf("%d peers of wg-mpeer-r are down: traffic is expected but none shook hands within 3m0s (newest 4m0s ago, oldest ", down)},
		{idle, fmt.Sprintf("%d idle peers of wg-mpeer-r have no handshake within 3m0s (newest 5m37s ago, oldest ", idle)},
	} {
		f := fs[i]
		if f.Peer != "" || f.Interface != "wg-mpeer-r" || !strings.HasPrefix(f.Title, want.title) {
			t.Errorf("finding %d: peer %q interface %q title %q, want %q...", i, f.Peer, f.Interface, f.Title, want.title)
		}
		if !strings.Contains(f.Detail, fmt.Sprintf(" and %d more.", want.n-5)) || strings.Count(f.Detail, "(198.18.") != 5 {
			t.Errorf("finding %d: detail does not name five and count the rest: %q", i, f.Detail)
		}
		listed := 0
		for _, e := range f.Evidence {
			if strings.HasPrefix(e.Key, "peer ") {
				listed++
			}
		}
		if listed != want.n || f.Evidence[0].Number != float64(want.n) || f.Evidence[0].Value != fmt.Sprintf("%d of %d peers", want.n, extra+2) {
			t.Errorf("finding %d: evidence lists %d peers, counts %+v; want %d", i, listed, f.Evidence[0], want.n)
		}
		if strings.Contains(f.Title+f.Detail, testutil.HubPeer(0).Key) {
			t.Errorf("finding %d names a whole key in its text", i)
		}
	}
	// The idle ones include every tenth, which never shook hands, listed last.
	idleEv := fs[1].Evidence
	if last := idleEv[len(idleEv)-1]; last.Value != "never" {
		t.Errorf("the last idle peer listed: %+v, want one that never shook hands", last)
	}
}
