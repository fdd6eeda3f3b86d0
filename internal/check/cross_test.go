package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// siteB is the other end of healthyHost's tunnel.
func siteB(t *testing.T) *facts.Snapshot {
	a := healthyHost()
	return with(t, a, func(s *facts.Snapshot) {
		s.Host, s.System.Hostname = targettest.Spec("ssh:site-b"), "site-b"
		w := &s.WireGuard[0]
		w.PublicKey, w.Peers[0].PublicKey = a.WireGuard[0].Peers[0].PublicKey, a.WireGuard[0].PublicKey
		w.Peers[0].Endpoint = "198.51.100.2:51820"
		s.Endpoints = []facts.EndpointRoute{{Interface: "wg0", Peer: w.Peers[0].PublicKey, Endpoint: "198.51.100.2", Dev: "eth0", Gateway: "203.0.113.1"}}
	})
}

type crossCase struct {
	name   string
	snaps  []*facts.Snapshot
	want   []finding.Severity
	assert func(t *testing.T, fs []finding.Finding)
}

func runCrossCases(t *testing.T, check *CrossCheck, cases []crossCase) {
	t.Helper()
	c := *check
	c.ID = entryID(t, func(e Entry) bool { return e.Cross == check })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := c.Run(tc.snaps, Options{})
			var got []finding.Severity
			for _, f := range fs {
				got = append(got, f.Severity)
				validFinding(t, c.ID, nil, f)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("severities = %v, want %v\n%s", got, tc.want, dump(fs))
			}
			if tc.assert != nil {
				tc.assert(t, fs)
			}
			record("cross:"+string(c.ID), len(fs) > 0)
		})
	}
}

func TestCrossMTU(t *testing.T) {
	a, b := healthyHost(), siteB(t)
	runCrossCases(t, &crossMTU, []crossCase{
		{name: "both 1420", snaps: []*facts.Snapshot{a, b}},
		{name: "unrelated hosts", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.WireGuard[0].PublicKey, s.WireGuard[0].Peers[0].PublicKey = "CCCC", "EEEE"
			s.WireGuard[0].MTU = 1280
		})}},
		{name: "B's uplink is PPPoE and B lowered its MTU, A did not", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.Links[1].MTU = 1440
			s.WireGuard[0].MTU = 1380
		})}, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if f.Host.String() != "ssh:site-a" || f.Interface != "wg0" || f.Fixes[0].Action.Params["mtu"] != "1380" {
				t.Errorf("finding %+v", f)
			}
			if !strings.Contains(f.Detail, "only carries 1380-byte") {
				t.Errorf("detail %q", f.Detail)
			}
		}},
		{name: "mismatch that both uplinks carry", snaps: []*facts.Snapshot{with(t, a, func(s *facts.Snapshot) { s.WireGuard[0].MTU = 1380 }), b},
			want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
				if fs[0].Host.String() != "ssh:site-b" {
					t.Errorf("the larger end is B: %+v", fs[0])
				}
			}},
	})
}

func TestCrossHandshake(t *testing.T) {
	a, b := healthyHost(), siteB(t)
	runCrossCases(t, &crossHandshake, []crossCase{
		{name: "both live", snaps: []*facts.Snapshot{a, b}},
		{name: "B lost A's key", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.WireGuard[0].Peers[0].PublicKey = "DDDDddddDDDDddddDDDDddddDDDDddddDDDDddddDDD="
		})}, want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Host.String() != "ssh:site-b" || fs[0].Peer != a.WireGuard[0].PublicKey {
				t.Errorf("finding %+v", fs[0])
			}
			if got := fs[0].Fixes[0].Commands[0]; got != "wg set wg0 peer AAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAA= allowed-ips 10.77.0.1/32" {
				t.Errorf("command %q", got)
			}
		}},
		{name: "A live, B never", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.WireGuard[0].Peers[0].LatestHandshake = time.Time{}
		})}, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Host.String() != "ssh:site-b" || fs[0].Evidence[1].Value != "never" {
				t.Errorf("finding %+v", fs[0])
			}
		}},
		{name: "both stale is the per-host check's", snaps: []*facts.Snapshot{
			with(t, a, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].LatestHandshake = time.Time{} }),
			with(t, b, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].LatestHandshake = time.Time{} }),
		}},
	})
}

func TestRunCrossOnlyWithSeveralHosts(t *testing.T) {
	a := with(t, healthyHost(), func(s *facts.Snapshot) { s.WireGuard[0].MTU = 1380 })
	if r := Run([]*facts.Snapshot{a}, Options{}); len(r.Findings) != 0 {
		t.Errorf("one host: %v", ids(r.Findings))
	}
	r := Run([]*facts.Snapshot{a, siteB(t)}, Options{})
	if got := fmt.Sprint(ids(r.Findings)); got != "[mtu.tunnel-too-large/info]" {
		t.Errorf("two hosts: %s", got)
	}
}

// TestCrossDelivery runs on a lab recorded with 3% random loss on the underlay
// and 64 KiB UDP buffers: A uploaded 120 MB to B, which dropped a fifth of it.
func TestCrossDelivery(t *testing.T) {
	a, b := loadSnapshot(t, "lab-loss3-udpbuf64k-a.json"), loadSnapshot(t, "lab-loss3-udpbuf64k-b.json")
	healthyA, healthyB := loadSnapshot(t, "lab-healthy-a.json"), loadSnapshot(t, "lab-healthy-b.json")
	// reverse gives B -> A bulk traffic too: sent by B, of which A received got.
	reverse := func(sent, got uint64) (*facts.Snapshot, *facts.Snapshot) {
		return with(t, a, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].RxBytes = got }),
			with(t, b, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].TxBytes = sent })
	}
	evenA, evenB := reverse(200e6, 160e6)     // B -> A loses 20% too
	cleanA, cleanB := reverse(200e6, 199.9e6) // B -> A loses 0.05%
	restartA, restartB := reverse(1e6, 150e6) // A received more than B says it sent: B restarted
	quietA, quietB := reverse(20e3, 20e3)     // keepalives only: nothing to compare with
	symA, symB := with(t, a, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].TxBytes = 125610032 }),
		with(t, b, func(s *facts.Snapshot) { s.WireGuard[0].Peers[0].RxBytes = 121648848 }) // 3.2% vs the recorded 3.1%
	runCrossCases(t, &crossDelivery, []crossCase{
		{name: "recorded lossy lab: A -> B lost 19.7%", snaps: []*facts.Snapshot{a, b}, want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if f.Host.String() != "netns:wgl-wgd5-a" || f.Interface != "wg-wgd5-a" || f.Peer != b.WireGuard[0].PublicKey {
					t.Errorf("finding is about %s %s peer %s, want A's wg-wgd5-a towards B", f.Host, f.Interface, f.Peer)
				}
				if got := f.Evidence[2].Value; got != "19.7%" {
					t.Errorf("loss A -> B = %s, want 19.7%%", got)
				}
				if got := f.Evidence[3].Value; got != "3.1% of 1.2 MiB" {
					t.Errorf("reverse direction = %q, want 3.1%% of 1.2 MiB (ACKs through 3%% loss)", got)
				}
				if f.Fixes[0].Commands[0] != "wgperf bench --client netns:wgl-wgd5-a --server netns:wgl-wgd5-b" {
					t.Errorf("fix %q", f.Fixes[0].Commands)
				}
			}},
		{name: "the same, listed B first", snaps: []*facts.Snapshot{b, a}, want: sev(warning)},
		{name: "recorded healthy lab: handshake-sized counters", snaps: []*facts.Snapshot{healthyA, healthyB}},
		{name: "the other way delivers", snaps: []*facts.Snapshot{cleanA, cleanB}, want: sev(warning)},
		{name: "both ways lose alike: not one-sided", snaps: []*facts.Snapshot{evenA, evenB}},
		{name: "counters started at different times", snaps: []*facts.Snapshot{restartA, restartB}},
		{name: "the other way carried next to nothing", snaps: []*facts.Snapshot{quietA, quietB}},
		{name: "lossy upload, ACKs as lossy (the lab's symmetric 3%)", snaps: []*facts.Snapshot{symA, symB}},
		{name: "snapshots ten minutes apart", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.CollectedAt = s.CollectedAt.Add(10 * time.Minute)
		})}},
		{name: "only one end collected", snaps: []*facts.Snapshot{a}},
	})
}
