package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// siteB is the other end of healthyHost's tunnel.
func siteB(t *testing.T) *facts.Snapshot {
	a := healthyHost()
	return with(t, a, func(s *facts.Snapshot) {
		s.Host, s.System.Hostname = "ssh:site-b", "site-b"
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

func runCrossCases(t *testing.T, c CrossCheck, cases []crossCase) {
	t.Helper()
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
			record("cross:"+c.ID, len(fs) > 0)
		})
	}
}

func TestCrossMTU(t *testing.T) {
	a, b := healthyHost(), siteB(t)
	runCrossCases(t, crossMTU, []crossCase{
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
			if f.Host != "ssh:site-a" || f.Interface != "wg0" || f.Fixes[0].Action.Params["mtu"] != "1380" {
				t.Errorf("finding %+v", f)
			}
			if !strings.Contains(f.Detail, "only carries 1380-byte") {
				t.Errorf("detail %q", f.Detail)
			}
		}},
		{name: "mismatch that both uplinks carry", snaps: []*facts.Snapshot{with(t, a, func(s *facts.Snapshot) { s.WireGuard[0].MTU = 1380 }), b},
			want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
				if fs[0].Host != "ssh:site-b" {
					t.Errorf("the larger end is B: %+v", fs[0])
				}
			}},
	})
}

func TestCrossHandshake(t *testing.T) {
	a, b := healthyHost(), siteB(t)
	runCrossCases(t, crossHandshake, []crossCase{
		{name: "both live", snaps: []*facts.Snapshot{a, b}},
		{name: "B lost A's key", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.WireGuard[0].Peers[0].PublicKey = "DDDDddddDDDDddddDDDDddddDDDDddddDDDDddddDDD="
		})}, want: sev(critical), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Host != "ssh:site-b" || fs[0].Peer != a.WireGuard[0].PublicKey {
				t.Errorf("finding %+v", fs[0])
			}
			if got := fs[0].Fixes[0].Commands[0]; got != "wg set wg0 peer AAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAA= allowed-ips 10.77.0.1/32" {
				t.Errorf("command %q", got)
			}
		}},
		{name: "A live, B never", snaps: []*facts.Snapshot{a, with(t, b, func(s *facts.Snapshot) {
			s.WireGuard[0].Peers[0].LatestHandshake = time.Time{}
		})}, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Host != "ssh:site-b" || fs[0].Evidence[1].Value != "never" {
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
