package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// mwan3Story is what "mwan3 status" adds to an endpoint pinned to the wrong
// uplink, as the multi-WAN router case read it: both uplinks' states, the
// pinned uplink's uptime that dates how old the route can be (it goes with
// that uplink's device), how long the preferred uplink has been back, the
// policies that already send their traffic over it, and, from netifd, a
// WireGuard interface that came up before the preferred uplink was back (the
// moment the route was made). Nothing when mwan3 said nothing of either
// uplink.
func mwan3Story(s *facts.Snapshot, e facts.EndpointRoute, pinned, pref *facts.Route) (string, []finding.Evidence) {
	family := familyOf(e.Endpoint)
	if s.OpenWrt == nil || len(s.OpenWrt.Uplinks) == 0 {
		return "", nil
	}
	prefName, pinnedName := uciSection(s, pref.Dev), uciSection(s, pinned.Dev)
	prefUp, pinnedUp := mwan3Uplink(s, prefName), mwan3Uplink(s, pinnedName)
	if prefUp == nil && pinnedUp == nil {
		return "", nil
	}
	var said []string
	var ev []finding.Evidence
	if pinnedUp != nil {
		value := mwan3State(pinnedUp)
		if pinnedUp.Uptime > 0 && !s.CollectedAt.IsZero() {
			since := s.CollectedAt.Add(-time.Duration(pinnedUp.Uptime) * time.Second).UTC()
			value += " (since about " + since.Format("2006-01-02 15:04") + " UTC)"
			said = append(said, fmt.Sprintf("%s (%s), the uplink the endpoint is pinned to, has been up since about %s UTC: the route can be that old",
				pinnedName, pinned.Dev, since.Format("2006-01-02 15:04")))
		}
		ev = append(ev, finding.Evidence{Source: "mwan3 status", Key: "uplink " + pinnedName + " (" + pinned.Dev + "), pinned", Value: value})
	}
	if prefUp != nil {
		ev = append(ev, finding.Evidence{Source: "mwan3 status", Key: "uplink " + prefName + " (" + pref.Dev + "), preferred", Value: mwan3State(prefUp),
			Threshold: "online"})
		if prefUp.Status == "online" && prefUp.Online > 0 {
			said = append(said, fmt.Sprintf("%s (%s), the preferred uplink, has been online for %s without the tunnel moving to it",
				prefName, pref.Dev, hoursMinutes(prefUp.Online)))
		}
	}
	var moved []string
	for _, p := range s.OpenWrt.Policies {
		if p.Family != "" && p.Family != mwan3Family(family) || !slices.ContainsFunc(p.Shares, func(sh facts.Mwan3Share) bool { return sh.Interface == prefName && sh.Percent > 0 }) {
			continue
		}
		shares := make([]string, len(p.Shares))
		for i, sh := range p.Shares {
			shares[i] = fmt.Sprintf("%s %d%%", sh.Interface, sh.Percent)
		}
		ev = append(ev, finding.Evidence{Source: "mwan3 status", Key: "policy " + p.Name, Value: strings.Join(shares, ", ")})
		if !slices.ContainsFunc(p.Shares, func(sh facts.Mwan3Share) bool { return sh.Interface == pinnedName && sh.Percent > 0 }) {
			moved = append(moved, p.Name)
		}
	}
	if len(moved) > 0 {
		said = append(said, fmt.Sprintf("mwan3's policy %s sends nothing over %s: mwan3 moved traffic back, only this static route did not follow",
			strings.Join(moved, ", "), pinnedName))
	}
	if wg := netifdInterface(s, e.Interface); wg != nil && wg.Uptime > 0 && prefUp != nil && prefUp.Online > 0 && wg.Uptime > prefUp.Online {
		// netifd makes the endpoint's route when the interface comes up, so
		// an interface older than the preferred uplink's return came up
		// while the backup was the way out.
		said = append(said, fmt.Sprintf("the WireGuard interface %s came up %s ago, before %s was last back (%s ago): netifd pinned the endpoint's route through %s then",
			wg.Name, hoursMinutes(wg.Uptime), prefName, hoursMinutes(prefUp.Online), pinnedName))
		ev = append(ev, finding.Evidence{Source: "ubus call network.interface dump", Key: "interface " + wg.Name + " up for", Value: hoursMinutes(wg.Uptime),
			Threshold: "< " + hoursMinutes(prefUp.Online) + " (since " + prefName + " is back)"})
	}
	if len(said) == 0 {
		return "", ev
	}
	return " mwan3 status: " + strings.Join(said, "; ") + ".", ev
}

// mwan3Uplink is the uplink named name in mwan3 status, or nil.
func mwan3Uplink(s *facts.Snapshot, name string) *facts.Mwan3Uplink {
	if name == "" {
		return nil
	}
	for i := range s.OpenWrt.Uplinks {
		if s.OpenWrt.Uplinks[i].Interface == name {
			return &s.OpenWrt.Uplinks[i]
		}
	}
	return nil
}

// mwan3State is "online for 60h:53m, up 1485h:25m" as far as mwan3 said it.
func mwan3State(u *facts.Mwan3Uplink) string {
	out := u.Status
	if u.Online > 0 {
		out += " for " + hoursMinutes(u.Online)
	}
	if u.Uptime > 0 {
		out += ", up " + hoursMinutes(u.Uptime)
	}
	return out
}

// hoursMinutes prints seconds as mwan3 does: "1485h:25m".
func hoursMinutes(sec int64) string { return fmt.Sprintf("%dh:%02dm", sec/3600, sec%3600/60) }

// mwan3Family names an address family ("inet") as mwan3's status does ("ipv4").
func mwan3Family(family string) string {
	if family == "inet6" {
		return "ipv6"
	}
	return "ipv4"
}

// netifdInterface is netifd's interface for the device dev, or nil.
func netifdInterface(s *facts.Snapshot, dev string) *facts.NetifdInterface {
	for i := range s.OpenWrt.Interfaces {
		if n := &s.OpenWrt.Interfaces[i]; n.Device == dev || n.Name == uciSection(s, dev) {
			return n
		}
	}
	return nil
}
