package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// Recorded in the lab's NAT topology ("lab up --nat-timeout 30"): R
// masquerades B towards A, so A holds B at R's address 198.51.100.1, which B
// does not have; B's peer for A has no keepalive. The healthy lab (no NAT,
// A keeps 25 s) stays quiet.
func TestCrossNATKeepalive(t *testing.T) {
	a, b := loadSnapshot(t, "lab-nat-a.json"), loadSnapshot(t, "lab-nat-b.json")
	healthyA, healthyB := loadSnapshot(t, "lab-healthy-a.json"), loadSnapshot(t, "lab-healthy-b.json")
	runCrossCases(t, &crossNATKeepalive, []crossCase{
		{name: "B behind NAT without keepalive", snaps: []*facts.Snapshot{a, b}, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if !f.Host.Same(b.Host) || f.Interface != "wg-nat-b" || f.Peer != a.WireGuard[0].PublicKey {
				t.Errorf("finding on %s %s for %s, want B's wg-nat-b for A's key", f.Host, f.Interface, f.Peer)
			}
			if f.Evidence[0].Value != "198.51.100.1:51820" || !strings.Contains(f.Evidence[1].Value, "203.0.113.2") {
				t.Errorf("evidence %v", f.Evidence)
			}
			if x := f.Fixes[0].Action; x == nil || x.Params["seconds"] != "25" || x.Params["interface"] != "wg-nat-b" {
				t.Errorf("fix %+v", f.Fixes[0])
			}
			if got := f.Fixes[0].Commands[0]; got != "wg set wg-nat-b peer "+a.WireGuard[0].PublicKey+" persistent-keepalive 25" {
				t.Errorf("command %q", got)
			}
		}},
		{name: "the same, B's snapshot first", snaps: []*facts.Snapshot{b, a}, want: sev(warning)},
		{name: "behind NAT with a keepalive", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].PersistentKeepalive = 25 })}},
		{name: "no NAT: B sees A at A's own address", snaps: []*facts.Snapshot{healthyA, healthyB}},
		{name: "no NAT and no keepalive", snaps: []*facts.Snapshot{with(t, healthyA, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].PersistentKeepalive = 0 }), healthyB}},
		{name: "an old snapshot without local routes cannot tell", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			var keep []facts.Route
			for _, r := range s.Routes {
				if r.Table != "local" {
					keep = append(keep, r)
				}
			}
			s.Routes = keep
		})}},
	})
}
