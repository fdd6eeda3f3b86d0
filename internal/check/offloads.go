package check

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// gsoRegression is a range of kernel releases known to mishandle UDP
// segmentation offload, and what its users did about it.
type gsoRegression struct {
	from, to  [3]int // releases, both included
	userspace bool   // only userspace WireGuard (TUN offloads) is hit; else the uplink's UDP GSO
	what, ref string
}

// udpGSORegressions are the known ones, with where they were reported.
var udpGSORegressions = []gsoRegression{
	{from: [3]int{6, 6, 44}, to: [3]int{6, 6, 44}, userspace: true,
		what: "writes of coalesced packets to the TUN device fail with EINVAL (\"Failed to write packets to TUN device: invalid argument\"), so the tunnel crawls",
		ref:  "fixed in 6.6.45 (tailscale/tailscale#13041)"},
	{from: [3]int{7, 0, 0}, to: [3]int{7, 1, 4},
		what: "UDP GSO mangles UDP headers and checksums on some drivers: heavy packet loss for every UDP sender that batches (WireGuard implementations that use UDP GSO among them)",
		ref:  "fixed in 7.1.5 (tailscale/tailscale#19918)"},
}

var udpOffloads = Check{
	Doc: `Judges the UDP offloads a tunnel depends on, from ethtool -k:
- a host that forwards (ip_forward 1) into a userspace WireGuard
  implementation (wireguard-go, boringtun, tailscaled batch UDP with GSO and
  GRO), whose uplink receives with GRO but has rx-udp-gro-forwarding off:
  forwarded UDP reaches the TUN one packet at a time. A note; the fix is the one Tailscale documents for
  subnet routers and exit nodes: "ethtool -K DEV rx-udp-gro-forwarding on
  rx-gro-list off".
- UDP segmentation offload on a kernel release known to mishandle it:
  6.6.44 breaks TUN writes of coalesced packets (userspace WireGuard; fixed in
  6.6.45), 7.0.0 to 7.1.4 mangle UDP GSO packets on some drivers (fixed in
  7.1.5). A warning; the fix turns tx-udp-segmentation off on the uplink where
  that helps, and says which release fixed it.`,
	Run: runUDPOffloads,
}

func runUDPOffloads(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	userspace := false
	for _, w := range s.WireGuard {
		userspace = userspace || w.Implementation == "userspace"
	}
	var out []finding.Finding
	up := sortedKeys(uplinks(s))
	if release, ok := kernelRelease(s.System.Kernel); ok {
		for _, g := range udpGSORegressions {
			if !inRelease(release, g.from, g.to) || (g.userspace && !userspace) {
				continue
			}
			out = append(out, gsoRegressionFinding(s, g, up)...)
		}
	}
	if strings.TrimSpace(s.Sysctls["net.ipv4.ip_forward"]) == "1" && userspace {
		for _, dev := range up {
			l := findLink(s, dev)
			if l == nil || isWireGuard(s, dev) {
				continue
			}
			// Without GRO itself there is nothing to forward in batches (a veth's default).
			if on, ok := l.Offloads["rx-udp-gro-forwarding"]; ok && !on && l.Offloads["generic-receive-offload"] {
				out = append(out, groForwardingFinding(s, l))
			}
		}
	}
	return out, nil
}

// releaseRE is a kernel release's version: "6.6.44" of "6.6.44-1-lts".
var releaseRE = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?`)

// kernelRelease reads "6.6.44-1-lts" as 6, 6, 44; a release without a patch
// level ("6.6-rc1") has 0.
func kernelRelease(r string) ([3]int, bool) {
	var out [3]int
	m := releaseRE.FindStringSubmatch(r)
	if m == nil {
		return out, false
	}
	for i, v := range m[1:] {
		out[i], _ = strconv.Atoi(v) // "" (no patch level) reads as 0
	}
	return out, true
}

func inRelease(r, from, to [3]int) bool {
	cmp := func(a, b [3]int) int {
		for i := range a {
			if a[i] != b[i] {
				return a[i] - b[i]
			}
		}
		return 0
	}
	return cmp(r, from) >= 0 && cmp(r, to) <= 0
}

func gsoRegressionFinding(s *facts.Snapshot, g gsoRegression, uplinkDevs []string) []finding.Finding {
	f := finding.Finding{
		ID:       catalog.NetUDPOffloads,
		Severity: finding.Warning,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("Kernel %s is known to mishandle UDP segmentation offload", s.System.Kernel),
		Detail:   fmt.Sprintf("On this kernel release %s; %s.", g.what, g.ref),
		Evidence: []finding.Evidence{{Source: "uname -r", Key: "kernel", Value: s.System.Kernel,
			Threshold: fmt.Sprintf("outside %d.%d.%d-%d.%d.%d", g.from[0], g.from[1], g.from[2], g.to[0], g.to[1], g.to[2])}},
	}
	if g.userspace {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "wg show", Key: "implementation", Value: "userspace"})
	} else {
		for _, dev := range uplinkDevs {
			if l := findLink(s, dev); l != nil && l.Offloads["tx-udp-segmentation"] {
				f.Evidence = append(f.Evidence, finding.Evidence{Source: "ethtool -k " + dev, Key: "tx-udp-segmentation", Value: "on", Threshold: "off on this kernel"})
				r, err := remedy.Offload(dev, []remedy.Feature{{Name: "tx-udp-segmentation"}})
				f.Fixes = append(f.Fixes, fixes(fmt.Sprintf("Turn UDP segmentation offload off on %s until the kernel is upgraded", dev), r, err)...)
			}
		}
		if len(f.Fixes) == 0 {
			return nil // no uplink segments UDP: nothing this host sends is hit
		}
	}
	f.Fixes = append(f.Fixes, finding.Fix{
		Description: "Upgrade the kernel: " + g.ref,
		Commands:    []string{"uname -r"},
	})
	return []finding.Finding{f}
}

func groForwardingFinding(s *facts.Snapshot, l *facts.Link) finding.Finding {
	features := []remedy.Feature{{Name: "rx-udp-gro-forwarding", On: true}}
	if _, ok := l.Offloads["rx-gro-list"]; ok {
		features = append(features, remedy.Feature{Name: "rx-gro-list"})
	}
	r, err := remedy.Offload(l.Name, features)
	return finding.Finding{
		ID:       catalog.NetUDPOffloads,
		Severity: finding.Info,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("UDP GRO forwarding is off on %s, the uplink of a host that forwards into a userspace tunnel", l.Name),
		Detail: "This host forwards traffic, and its WireGuard implementation runs in userspace, where batching UDP (GSO and GRO) " +
			"decides how many packets it handles per byte. With rx-udp-gro-forwarding off, UDP this host forwards arrives one packet " +
			"at a time; on (with rx-gro-list off, so batches stay ones a TUN can take) the kernel hands it over in batches.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "sysctl", Key: "net.ipv4.ip_forward", Value: "1"}.Of(1, finding.Flag),
			{Source: "ethtool -k " + l.Name, Key: "rx-udp-gro-forwarding", Value: "off", Threshold: "on"},
			{Source: "wg show", Key: "implementation", Value: "userspace"},
		},
		Fixes: fixes(fmt.Sprintf("Turn UDP GRO forwarding on for %s (rx-gro-list off)", l.Name), r, err),
	}
}
