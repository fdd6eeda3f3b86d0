package check

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// noteFor returns the message of the first note whose source mentions one of
// keys, so a skip can say why a source is missing ("nft not installed").
func noteFor(s *facts.Snapshot, keys ...string) string {
	for _, n := range s.Notes {
		for _, k := range keys {
			if strings.Contains(n.Source, k) {
				return n.Source + ": " + n.Message
			}
		}
	}
	return ""
}

// missing builds a skip for a source that is absent from the snapshot.
func missing(s *facts.Snapshot, what string, keys ...string) error {
	if why := noteFor(s, keys...); why != "" {
		return skipf("%s not collected (%s)", what, why)
	}
	return skipf("%s not collected", what)
}

// noWireGuard is what a WireGuard check returns on a host without interfaces:
// a skip when "wg show" failed, nothing when there simply is no tunnel.
func noWireGuard(s *facts.Snapshot) error {
	if why := noteFor(s, "wg show", "wg"); why != "" {
		return skipf("WireGuard interfaces not collected (%s)", why)
	}
	return nil
}

// missingSysctl builds a skip for an absent sysctl, with the note about its
// /proc/sys file when the collector left one.
func missingSysctl(s *facts.Snapshot, key string) error {
	return missing(s, key, "/proc/sys/"+strings.ReplaceAll(key, ".", "/"), "sysctl")
}

func findLink(s *facts.Snapshot, name string) *facts.Link {
	for i := range s.Links {
		if s.Links[i].Name == name {
			return &s.Links[i]
		}
	}
	return nil
}

func isWireGuard(s *facts.Snapshot, name string) bool {
	for _, w := range s.WireGuard {
		if w.Name == name {
			return true
		}
	}
	return false
}

// linkUp treats UNKNOWN as up: tun, ppp and many virtual links never report UP.
func linkUp(l *facts.Link) bool { return l == nil || l.State != "DOWN" }

// sysctlInt reads a numeric sysctl; ok is false when it is absent or not a number.
func sysctlInt(s *facts.Snapshot, key string) (int64, bool) {
	v, ok := s.Sysctls[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// sysctlTriple reads a "min default max" sysctl such as net.ipv4.tcp_rmem.
func sysctlTriple(s *facts.Snapshot, key string) ([3]int64, bool) {
	var t [3]int64
	f := strings.Fields(s.Sysctls[key])
	if len(f) != 3 {
		return t, false
	}
	for i, x := range f {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return t, false
		}
		t[i] = n
	}
	return t, true
}

// counter reads Counters.SNMP[group][key] (then Netstat) and says whether it exists.
func counter(s *facts.Snapshot, group, key string) (int64, bool) {
	if v, ok := s.Counters.SNMP[group][key]; ok {
		return v, true
	}
	v, ok := s.Counters.Netstat[group][key]
	return v, ok
}

// fixes is r as a finding's fixes, or none when its constructor refused a
// value from the snapshot.
var fixes = remedy.Fixes

// sysctlFix sets one sysctl now and in /etc/sysctl.d, with the matching action.
func sysctlFix(description, key, value string) []finding.Fix {
	r, err := remedy.Sysctl(key, value)
	return fixes(description, r, err)
}

// wgMTUFix sets a WireGuard interface's MTU now and in its persistent config:
// wg-quick's [Interface] MTU, and uci on OpenWrt.
func wgMTUFix(s *facts.Snapshot, iface string, mtu int, description string) []finding.Fix {
	r, err := remedy.WGMTU(iface, mtu, platform(s), uciSection(s, iface))
	return fixes(description, r, err)
}

// platform is the host's platform as the snapshot shows it.
func platform(s *facts.Snapshot) remedy.Platform {
	if s.OpenWrt != nil {
		return remedy.OpenWrt
	}
	return remedy.Linux
}

// uciSection is the OpenWrt network section behind a device, "" when the
// snapshot shows none (remedy then tries the device's own name). For proto
// wireguard the device carries the section's name; other devices are found by
// their "device" option.
func uciSection(s *facts.Snapshot, dev string) string {
	if s.OpenWrt == nil {
		return ""
	}
	if _, ok := s.OpenWrt.Network["network."+dev]; ok {
		return dev
	}
	for k, v := range s.OpenWrt.Network {
		if strings.HasSuffix(k, ".device") && strings.Trim(v, "'") == dev {
			return strings.TrimSuffix(strings.TrimPrefix(k, "network."), ".device")
		}
	}
	return ""
}

// preferredDefault is the default route the kernel uses for family in the main
// table: the lowest metric among those whose link is up and not "linkdown".
func preferredDefault(s *facts.Snapshot, family string) *facts.Route {
	var best *facts.Route
	for i := range s.Routes {
		r := &s.Routes[i]
		if r.Dst != "default" || r.Family != family || (r.Table != "main" && r.Table != "") {
			continue
		}
		if r.Type != "" && r.Type != "unicast" {
			continue
		}
		if hasFlag(r, "linkdown") || hasFlag(r, "dead") || !linkUp(findLink(s, r.Dev)) {
			continue
		}
		if best == nil || r.Metric < best.Metric {
			best = r
		}
	}
	return best
}

func hasFlag(r *facts.Route, flag string) bool {
	for _, f := range r.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// uplinks are the devices that carry traffic out of the host: those of default
// routes in the main table and those endpoint routes leave by.
func uplinks(s *facts.Snapshot) map[string]bool {
	up := map[string]bool{}
	for _, r := range s.Routes {
		if r.Dst == "default" && (r.Table == "main" || r.Table == "") && r.Dev != "" {
			up[r.Dev] = true
		}
	}
	for _, e := range s.Endpoints {
		if e.Dev != "" {
			up[e.Dev] = true
		}
	}
	return up
}

// familyOf returns "inet" or "inet6" for an address, "" when it does not parse.
func familyOf(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return ""
	}
	if a.Unmap().Is4() {
		return "inet"
	}
	return "inet6"
}

// routeCovers reports whether route destination dst ("default", a prefix or a
// bare address) contains addr.
func routeCovers(dst, addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	if dst == "default" {
		return true
	}
	if p, err := netip.ParsePrefix(dst); err == nil {
		return p.Contains(a)
	}
	b, err := netip.ParseAddr(dst)
	return err == nil && b.Unmap() == a
}

// isHostRoute reports whether dst names exactly addr (bare, /32 or /128).
func isHostRoute(dst, addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	if p, err := netip.ParsePrefix(dst); err == nil {
		return p.IsSingleIP() && p.Addr().Unmap() == a.Unmap()
	}
	b, err := netip.ParseAddr(dst)
	return err == nil && b.Unmap() == a.Unmap()
}

// kernelBefore reports whether the kernel release is older than major.minor;
// known is false when the release does not parse.
func kernelBefore(s *facts.Snapshot, major, minor int) (before, known bool) {
	return remedy.KernelBefore(s.System.Kernel, major, minor)
}

// shortKey abbreviates a WireGuard public key for titles.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func utoa(n uint64) string { return strconv.FormatUint(n, 10) }

// mib renders a byte count for humans, e.g. "208 KiB", "25 MiB".
func mib(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
