package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// TestLinkSpeed runs on a lab node collected with its links' sysfs speed and
// duplex: its uplink is a veth, whose driver reports 10000 Mbit/s full
// duplex whatever carries it, so the cases make it a NIC that negotiated.
func TestLinkSpeed(t *testing.T) {
	a := loadSnapshot(t, "lab-linkspeed-a.json")
	nic := func(speed int, duplex string) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) {
			for i := range s.Links {
				if s.Links[i].Name == "eth0" {
					s.Links[i].Kind, s.Links[i].SpeedMbit, s.Links[i].Duplex = "", speed, duplex
				}
			}
		}
	}
	runCases(t, &linkSpeed, []checkCase{
		{name: "a veth's made-up 10000 Mbit/s", snap: a},
		{name: "a 1G NIC: the ceiling", snap: with(t, a, nic(1000, "full")), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Title != "eth0 links at 1000 Mbit/s: a tunnel over it carries at most about 902 Mbit/s of TCP" {
				t.Errorf("title %q", fs[0].Title)
			}
		}},
		{name: "half duplex", snap: with(t, a, nic(100, "half")), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if !strings.Contains(fs[0].Fixes[0].Commands[0], "ethtool -s eth0 autoneg on") {
				t.Errorf("fixes %+v", fs[0].Fixes)
			}
		}},
		{name: "speed unknown", snap: with(t, a, nic(0, ""))},
		{name: "links not collected", snap: with(t, a, func(s *facts.Snapshot) {
			s.Links = nil
			s.Notes = append(s.Notes, facts.Note{Source: "ip link", Message: "ip not installed"})
		}), skip: true},
	})
}
