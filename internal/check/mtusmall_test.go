package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// TestTunnelTooSmall runs on snapshots collected from a lab whose WireGuard
// interfaces were brought up at MTU 1280 ("to be safe") over 1500-byte links.
func TestTunnelTooSmall(t *testing.T) {
	a := loadSnapshot(t, "lab-wgmtu1280-a.json")
	setMTU := func(mtu int) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) { s.WireGuard[0].MTU = mtu }
	}
	runCases(t, &tunnelTooSmall, []checkCase{
		{name: "1280 over a 1500-byte link with an IPv4 endpoint", snap: a, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if f.Title != "wg-rc6-a MTU 1280 is 160 bytes below what eth0 allows (1440)" {
				t.Errorf("title %q", f.Title)
			}
			if !strings.Contains(f.Detail, "about 12% more packets") {
				t.Errorf("detail %q", f.Detail)
			}
			if len(f.Fixes) != 2 || !strings.HasPrefix(f.Fixes[0].Commands[0], "wgperf mtu --client netns:wgl-rc6-a") {
				t.Fatalf("want the path MTU search first, then the MTU: %+v", f.Fixes)
			}
			if act := f.Fixes[1].Action; act == nil || act.Kind != remedy.KindWGMTU || act.Params["mtu"] != "1440" {
				t.Errorf("fix %+v, want wg-mtu 1440", f.Fixes[1])
			}
		}},
		{name: "1360: a note", snap: with(t, a, setMTU(1360)), want: sev(info)},
		{name: "1380 (room for a tunnel inside)", snap: with(t, a, setMTU(1380))},
		{name: "wg-quick's 1420 (room for an IPv6 endpoint)", snap: with(t, a, setMTU(1420))},
		{name: "1440, what fits", snap: with(t, a, setMTU(1440))},
		{name: "1280 over a 1340-byte uplink fits it", snap: with(t, a, func(s *facts.Snapshot) {
			for i := range s.Links {
				if s.Links[i].Name == "eth0" {
					s.Links[i].MTU = 1340
				}
			}
		})},
		{name: "an IPv6 endpoint leaves 1420", snap: with(t, a, func(s *facts.Snapshot) {
			s.WireGuard[0].MTU = 1360
			s.Endpoints[0].Endpoint = "2001:db8::2"
		})},
		{name: "no endpoint routes collected", snap: with(t, a, func(s *facts.Snapshot) {
			s.Endpoints = nil
			s.Notes = append(s.Notes, facts.Note{Source: "ip route get", Message: "failed"})
		}), skip: true},
	})
}
