package check

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// flapChecks is how many failed health checks on an uplink that never went
// offline count: a limiter eating some replies leaves a steady trickle of
// them (thousands in the multi-WAN case), a lost ping now and then a few.
const flapChecks = 10

var uplinkFlaps = Check{
	Doc: `On OpenWrt with mwan3, reads what mwan3track logged (logread): the
preferred uplink's (the lowest-metric default route's device) "Interface X is
offline" and "is online" events, and its failed health checks ("Check (ping)
failed ... Current score: N"). Each time the preferred uplink was offline, a
WireGuard interface that came up (a restart, a reboot, a flap of its own) got
netifd's host route to its endpoint through the backup, where it stays: the
multi-WAN case's tunnel ran over the 5G backup for two months after the fiber
was declared offline three times in its first days. Failed checks on an
uplink that stays online (the score holding at 9-10) mean something drops the
replies: there, banIP's ICMP limit, whose counter a reboot or a firewall reload
resets while the log keeps the failures. Warning when the preferred uplink went
offline, or when at least 10 of its checks failed. Fixes: nohostroute=1 on the
WireGuard interfaces of a split tunnel (the endpoint then follows mwan3's
default route, flaps included), and icmp-burst against the health-check
targets to find what eats the replies.`,
	Run: runUplinkFlaps,
}

func runUplinkFlaps(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	ow := s.OpenWrt
	if ow == nil || (len(ow.Events) == 0 && len(ow.Checks) == 0) {
		if ow != nil {
			if why := noteFor(s, "logread"); why != "" {
				return nil, skipf("mwan3's log not read (%s)", why)
			}
		}
		return nil, nil
	}
	pref := preferredDefault(s, "inet")
	if pref == nil {
		return nil, nil
	}
	// The mwan3 interface of the preferred uplink, as its log lines name it.
	var iface string
	for _, e := range ow.Events {
		if e.Device == pref.Dev {
			iface = e.Interface
		}
	}
	for _, c := range ow.Checks {
		if c.Device == pref.Dev {
			iface = c.Interface
		}
	}
	if iface == "" {
		return nil, nil
	}
	offline := offlinePeriods(ow.Events, iface)
	var checks *facts.HealthChecks
	for i := range ow.Checks {
		if ow.Checks[i].Interface == iface {
			checks = &ow.Checks[i]
		}
	}
	if len(offline) == 0 && (checks == nil || checks.Failed < flapChecks) {
		return nil, nil
	}
	return []finding.Finding{flapFinding(s, iface, pref, offline, checks)}, nil
}

// offlinePeriod is one stretch an uplink was declared offline.
type offlinePeriod struct {
	from, to time.Time // to is zero while it still is
}

// offlinePeriods pairs an interface's offline events with the online events
// that ended them, in time order.
func offlinePeriods(events []facts.LinkEvent, iface string) []offlinePeriod {
	var evs []facts.LinkEvent
	for _, e := range events {
		if e.Interface == iface {
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b facts.LinkEvent) int { return a.Time.Compare(b.Time) })
	var out []offlinePeriod
	for _, e := range evs {
		switch {
		case e.State == "offline" && (len(out) == 0 || !out[len(out)-1].to.IsZero()):
			out = append(out, offlinePeriod{from: e.Time})
		case e.State == "online" && len(out) > 0 && out[len(out)-1].to.IsZero():
			out[len(out)-1].to = e.Time
		}
	}
	return out
}

func flapFinding(s *facts.Snapshot, iface string, pref *facts.Route, offline []offlinePeriod, checks *facts.HealthChecks) finding.Finding {
	f := finding.Finding{
		ID:       catalog.RouteUplinkFlaps,
		Severity: finding.Warning,
		Host:     hostOf(s),
		Detail: fmt.Sprintf("mwan3 tracks %s (%s), the preferred uplink, with health checks. ", iface, pref.Dev) +
			"Whenever it declares it offline, the backup takes the default route, and a WireGuard interface that comes up then " +
			"(a restart, a reboot, a flap of its own) gets netifd's host route to its endpoint through the backup, where it stays " +
			"after the preferred uplink returns.",
	}
	var parts []string
	if n := len(offline); n > 0 {
		longest, last := offlinePeriod{}, offline[n-1]
		for _, p := range offline {
			if !p.to.IsZero() && p.to.Sub(p.from) > longest.to.Sub(longest.from) {
				longest = p
			}
		}
		parts = append(parts, fmt.Sprintf("offline %d time%s", n, plural(n)))
		value := fmt.Sprintf("%d time%s, the last at %s", n, plural(n), last.from.Format(time.DateTime))
		if !longest.to.IsZero() {
			value += fmt.Sprintf(", the longest %s (from %s)", longest.to.Sub(longest.from).Round(time.Second), longest.from.Format(time.DateTime))
		}
		if last.to.IsZero() {
			value += "; no online since"
		}
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "logread (mwan3track)", Key: iface + " (" + pref.Dev + ") declared offline", Value: value,
			Threshold: "0 (each a moment an endpoint route can be pinned to the backup)"}.Of(float64(n), finding.Count))
	}
	if checks != nil && checks.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed health checks", checks.Failed))
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "logread (mwan3track)", Key: "failed health checks on " + iface,
			Value: fmt.Sprintf("%d (targets %s, lowest score %d, %s to %s)", checks.Failed, strings.Join(checks.Targets, ", "), checks.MinScore,
				checks.First.Format(time.DateTime), checks.Last.Format(time.DateTime)),
			Threshold: fmt.Sprintf("< %d while the uplink stays online", flapChecks)}.Of(float64(checks.Failed), finding.Count))
		if len(offline) == 0 || checks.MinScore > 0 {
			f.Detail += fmt.Sprintf(" %d health checks failed on it; where its score held up (lowest %d) the link worked and something "+
				"dropped the replies (an ICMP rate limit whose counter a reboot or firewall reload has reset since): each run of failures "+
				"brings the next false offline closer.", checks.Failed, checks.MinScore)
		}
	}
	f.Title = fmt.Sprintf("Preferred uplink %s (%s): %s in mwan3's log", iface, pref.Dev, strings.Join(parts, ", "))
	for _, e := range s.Endpoints {
		if host := hostRouteTo(s, e.Endpoint); host != nil && host.Gateway != pref.Gateway {
			f.Evidence = append(f.Evidence, finding.Evidence{Source: "ip route show table main", Key: "host route " + e.Endpoint,
				Value: describeRoute(host) + " (pinned to the backup, as a flap leaves it)"})
			f.Detail += fmt.Sprintf(" The endpoint %s is pinned that way now (route.stale-endpoint).", e.Endpoint)
		}
	}
	f.Fixes = append(f.Fixes, noHostRouteFixes(s)...)
	if targets := trackTargets(s, iface); len(targets) > 0 {
		f.Fixes = append(f.Fixes, finding.Fix{
			Description: "Find what drops the health checks' replies: one-shot pings (as mwan3 sends them) against one persistent ping, with the firewall counters before and after",
			Commands:    []string{shell.Join("wgperf", "icmp-burst", "--host", hostName(s), "--targets", strings.Join(targets, ","))},
		})
	}
	if len(f.Fixes) == 0 {
		f.Fixes = []finding.Fix{{
			Description: "Read the uplink's history in the log",
			Commands:    []string{"logread -e mwan3track"},
		}}
	}
	return f
}

// noHostRouteFixes stop netifd pinning host routes for the split-tunnel
// WireGuard interfaces that do not have nohostroute=1 yet.
func noHostRouteFixes(s *facts.Snapshot) []finding.Fix {
	var out []finding.Fix
	seen := map[string]bool{}
	for _, e := range s.Endpoints {
		section := cmp.Or(uciSection(s, e.Interface), e.Interface)
		if e.Endpoint == "" || seen[section] || fullTunnel(s, e.Interface, e.Endpoint) ||
			strings.Trim(s.OpenWrt.Network["network."+section+".nohostroute"], "'") == "1" {
			continue
		}
		seen[section] = true
		r, err := remedy.NoHostRoute(e.Endpoint, section)
		out = append(out, fixes(fmt.Sprintf("Stop netifd pinning a host route to %s (split tunnel): it then follows mwan3's default route through every flap", e.Endpoint), r, err)...)
	}
	return out
}

// trackTargets are the addresses mwan3 pings on iface (track_ip).
func trackTargets(s *facts.Snapshot, iface string) []string {
	var out []string
	for _, t := range strings.Fields(strings.ReplaceAll(s.OpenWrt.Mwan3["mwan3."+iface+".track_ip"], "'", "")) {
		if _, err := netip.ParseAddr(t); err == nil {
			out = append(out, t)
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
