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
		{name: "the ECMP case's 3x1G 802.3ad bond: one tunnel rides one slave", snap: with(t, a, bond3x1G("802.3ad", 1000)), want: sev(info),
			assert: func(t *testing.T, fs []finding.Finding) {
				if want := "bond0 bonds 3000 Mbit/s over 3 slaves (802.3ad): one tunnel carries at most about 902 Mbit/s of TCP, several flows about 2707"; fs[0].Title != want {
					t.Errorf("title %q, want %q", fs[0].Title, want)
				}
				if last := fs[0].Evidence[len(fs[0].Evidence)-1]; last.Key != "eno3 speed (one flow's ceiling)" || last.Value != "1000 Mbit/s" {
					t.Errorf("evidence %+v", fs[0].Evidence)
				}
				if !strings.Contains(fs[0].Detail, "one UDP flow") {
					t.Errorf("detail %q does not say why", fs[0].Detail)
				}
			}},
		{name: "slaves without a speed: the bond's shared out", snap: with(t, a, bond3x1G("802.3ad 4", 0)), want: sev(info),
			assert: func(t *testing.T, fs []finding.Finding) {
				if !strings.Contains(fs[0].Title, "at most about 902 Mbit/s") || !strings.Contains(fs[0].Detail, "about 1000 Mbit/s (the slaves report no speed") {
					t.Errorf("title %q detail %q", fs[0].Title, fs[0].Detail)
				}
			}},
		{name: "balance-rr spreads one flow's packets: the sum", snap: with(t, a, bond3x1G("balance-rr 0", 1000)), want: sev(info),
			assert: func(t *testing.T, fs []finding.Finding) {
				if fs[0].Title != "bond0 links at 3000 Mbit/s: a tunnel over it carries at most about 2707 Mbit/s of TCP" {
					t.Errorf("title %q", fs[0].Title)
				}
			}},
		{name: "links not collected", snap: with(t, a, func(s *facts.Snapshot) {
			s.Links = nil
			s.Notes = append(s.Notes, facts.Note{Source: "ip link", Message: "ip not installed"})
		}), skip: true},
	})
}

// bond3x1G makes the uplink the ECMP case's bond: three 1G ports in mode,
// as sysfs reports them (the bond's speed is the sum of its active slaves',
// bond_ethtool_get_link_ksettings; mode and xmit_hash_policy print the name
// and the number). Transcribed, not recorded: this kernel has no bonding
// driver (testdata/collect/ip/transcribed/README). slaveMbit 0: the slaves
// report no speed.
func bond3x1G(mode string, slaveMbit int) func(s *facts.Snapshot) {
	return func(s *facts.Snapshot) {
		s.Links = append(s.Links, facts.Link{Name: "bond0", MTU: 1500, Kind: "bond", State: "UP", SpeedMbit: 3000, Duplex: "full",
			Bond: &facts.Bond{Mode: mode, XmitHashPolicy: "layer3+4 1", Slaves: []string{"eno1", "eno2", "eno3"}}})
		for _, name := range []string{"eno1", "eno2", "eno3"} {
			s.Links = append(s.Links, facts.Link{Name: name, MTU: 1500, State: "UP", Master: "bond0", SpeedMbit: slaveMbit, Duplex: "full"})
		}
		for i := range s.Routes {
			if s.Routes[i].Dev == "eth0" {
				s.Routes[i].Dev = "bond0"
			}
		}
		for i := range s.Endpoints {
			s.Endpoints[i].Dev = "bond0"
		}
	}
}
