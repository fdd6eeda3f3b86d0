package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// Recorded in the lab's NAT topology ("lab up --nat-timeout 30"): R
// masquerades A towards B, so B holds A at R's address 203.0.113.1, which A
// does not have; A's peer for B has no keepalive. The healthy lab (no NAT,
// A keeps 25 s) stays quiet.
func TestCrossNATKeepalive(t *testing.T) {
	a, b := loadSnapshot(t, "lab-nat-a.json"), loadSnapshot(t, "lab-nat-b.json")
	healthyA, healthyB := loadSnapshot(t, "lab-healthy-a.json"), loadSnapshot(t, "lab-healthy-b.json")
	runCrossCases(t, &crossNATKeepalive, []crossCase{
		{name: "A behind NAT without keepalive", snaps: []*facts.Snapshot{a, b}, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if f.Host != a.Host || f.Interface != "wg-nat-a" || f.Peer != b.WireGuard[0].PublicKey {
				t.Errorf("finding on %s %s for %s, want A's wg-nat-a for B's key", f.Host, f.Interface, f.Peer)
			}
			if f.Evidence[0].Value != "203.0.113.1:51820" || !strings.Contains(f.Evidence[1].Value, "198.51.100.2") {
				t.Errorf("evidence %v", f.Evidence)
			}
			if a := f.Fixes[0].Action; a == nil || a.Params["seconds"] != "25" || a.Params["interface"] != "wg-nat-a" {
				t.Errorf("fix %+v", f.Fixes[0])
			}
			if got := f.Fixes[0].Commands[0]; got != "wg set wg-nat-a peer "+b.WireGuard[0].PublicKey+" persistent-keepalive 25" {
				t.Errorf("command %q", got)
			}
		}},
		{name: "the same, B's snapshot first", snaps: []*facts.Snapshot{b, a}, want: sev(warning)},
		{name: "behind NAT with a keepalive", snaps: []*facts.Snapshot{with(t, a, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].PersistentKeepalive = 25 }), b}},
		{name: "no NAT: B sees A at A's own address", snaps: []*facts.Snapshot{healthyA, healthyB}},
		{name: "no NAT and no keepalive", snaps: []*facts.Snapshot{with(t, healthyA, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].PersistentKeepalive = 0 }), healthyB}},
		{name: "an old snapshot without local routes cannot tell", snaps: []*facts.Snapshot{with(t, a, func(s *facts.Snapshot) {
			var keep []facts.Route
			for _, r := range s.Routes {
				if r.Table != "local" {
					keep = append(keep, r)
				}
			}
			s.Routes = keep
		}), b}},
	})
}
