package check

import (
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// TestUplinkFlaps runs on a snapshot collected over ssh from the lab's
// OpenWrt-like router (multi-WAN) after the multi-WAN case's story was logged
// there (testdata/collect/openwrt/README): the fiber (wan, eth0) went offline,
// the WireGuard interface restarted meanwhile and netifd pinned its endpoint
// to the backup (eth1), the fiber came back, and checks kept failing at a
// score of 9-10. No firewall counter is involved: the log alone tells it.
func TestUplinkFlaps(t *testing.T) {
	r := loadSnapshot(t, "lab-router-flaps-a.json")
	onlyChecks := func(s *facts.Snapshot) {
		s.OpenWrt.Events = nil
		s.OpenWrt.Checks[0].MinScore = 9
	}
	runCases(t, &uplinkFlaps, []checkCase{
		{name: "declared offline once, 18 failed checks, the endpoint pinned to the backup", snap: r, want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if f.Title != "Preferred uplink wan (eth0): offline 1 time, 18 failed health checks in mwan3's log" {
					t.Errorf("title %q", f.Title)
				}
				var keys []string
				for _, e := range f.Evidence {
					keys = append(keys, e.Key)
				}
				if strings.Join(keys, "|") != "wan (eth0) declared offline|failed health checks on wan|host route 203.0.113.2" {
					t.Errorf("evidence %q", keys)
				}
				a := f.Fixes[0].Action
				if a == nil || a.Kind != remedy.KindEndpointRoute || a.Params["uci_interface"] != "wg_rc8_a" || a.Params["endpoint"] != "203.0.113.2" {
					t.Errorf("first fix %+v, want nohostroute on wg_rc8_a", f.Fixes[0])
				}
				if got := f.Fixes[1].Commands[0]; got != "wgperf icmp-burst --host ssh:root@198.51.100.2:2222 --targets 198.51.100.1,203.0.113.2" {
					t.Errorf("probe fix %q", got)
				}
			}},
		{name: "checks failing at 9-10 on a link that never went offline (counters reset since)", snap: with(t, r, onlyChecks),
			want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
				if !strings.Contains(fs[0].Detail, "dropped the replies") {
					t.Errorf("detail %q", fs[0].Detail)
				}
			}},
		{name: "a few failed checks", snap: with(t, r, func(s *facts.Snapshot) {
			onlyChecks(s)
			s.OpenWrt.Checks[0].Failed = 3
		})},
		{name: "only the backup flapped", snap: with(t, r, func(s *facts.Snapshot) {
			s.OpenWrt.Checks = nil
			var keep []facts.LinkEvent
			for _, e := range s.OpenWrt.Events {
				if e.Interface != "wan" {
					keep = append(keep, e)
				}
			}
			s.OpenWrt.Events = keep
		})},
		{name: "nohostroute already set: the probe alone", snap: with(t, r, func(s *facts.Snapshot) {
			s.OpenWrt.Network["network.wg_rc8_a.nohostroute"] = "1"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if len(fs[0].Fixes) != 1 || fs[0].Fixes[0].Action != nil {
				t.Errorf("fixes %+v", fs[0].Fixes)
			}
		}},
		{name: "not OpenWrt", snap: healthyHost()},
		{name: "logread failed", snap: with(t, r, func(s *facts.Snapshot) {
			s.OpenWrt.Events, s.OpenWrt.Checks = nil, nil
			s.Notes = append(s.Notes, facts.Note{Source: "logread", Message: "logread not installed"})
		}), skip: true},
	})
	periods := offlinePeriods([]facts.LinkEvent{
		{Time: time.Date(2026, 2, 4, 22, 30, 0, 0, time.UTC), Interface: "wan", State: "offline"},
		{Time: time.Date(2026, 2, 5, 7, 13, 0, 0, time.UTC), Interface: "wan", State: "online"},
		{Time: time.Date(2026, 2, 6, 22, 56, 0, 0, time.UTC), Interface: "wan", State: "offline"},
		{Time: time.Date(2026, 2, 6, 23, 0, 0, 0, time.UTC), Interface: "wan5g", State: "online"},
	}, "wan")
	if len(periods) != 2 || periods[0].to.Sub(periods[0].from) != 8*time.Hour+43*time.Minute || !periods[1].to.IsZero() {
		t.Errorf("offline periods %+v", periods)
	}
}
