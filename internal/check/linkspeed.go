package check

import (
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// virtualKinds are link kinds whose reported speed is a number the driver
// made up (veth and tun say 10000 Mbit/s), not a negotiated link.
var virtualKinds = map[string]bool{"veth": true, "tun": true, "tap": true, "wireguard": true, "bridge": true, "dummy": true,
	"macvlan": true, "ipvlan": true, "vxlan": true, "gre": true, "gretap": true, "ipip": true, "sit": true, "ifb": true}

// Bytes on the wire a full-size packet costs beyond its IP MTU (Ethernet
// header, FCS, preamble, gap), and what TCP inside WireGuard does not carry
// of it (outer IPv4+UDP+WireGuard 60, inner IPv4+TCP with timestamps 52).
const (
	ethernetFraming   = 38
	tunnelTCPOverhead = overheadIPv4 + 52
)

var linkSpeed = Check{
	Doc: `Reads the speed and duplex each uplink negotiated (sysfs; virtual devices,
whose drivers report a made-up speed, are left out) and shows it as the
ceiling: no tunnel over a 1000 Mbit/s link carries more than about 900 Mbit/s
of TCP, whatever the internet plan behind it. A note, since only the user knows
the plan; a warning at half duplex, a cable or autonegotiation fault that
halves the link and adds collisions. The ECMP and bonding case began there:
a server on a 1G switch port under a 10G uplink could not push more than
1 Gbit/s through the tunnel; bonding (layer3+4 hashing) and ECMP over several
tunnels went past it.

A bond reports the sum of its active slaves' speeds (3000 Mbit/s for three
1G ports), but a bond that hashes flows (802.3ad, balance-xor, balance-tlb,
balance-alb) sends each flow by one slave, and a WireGuard tunnel is one UDP
flow: one tunnel's ceiling is one slave's speed (the ECMP case's one tunnel
over its 3×1G bond carried 874-893 Mbit/s), and the sum is what several
tunnels on different ports (ECMP, layer3+4) can reach together.`,
	Run: runLinkSpeed,
}

func runLinkSpeed(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.Links) == 0 {
		return nil, missing(s, "links", "ip link", "ip")
	}
	var out []finding.Finding
	for _, dev := range sortedKeys(uplinks(s)) {
		l := findLink(s, dev)
		if l == nil || l.SpeedMbit <= 0 || virtualKinds[l.Kind] || isWireGuard(s, dev) {
			continue
		}
		out = append(out, linkSpeedFinding(s, l))
	}
	return out, nil
}

// tunnelTCP is the TCP a tunnel carries over mbit of link l: what is left
// after Ethernet framing and WireGuard's and TCP's headers at l's MTU.
func tunnelTCP(l *facts.Link, mbit int) float64 {
	mtu := l.MTU
	if mtu <= tunnelTCPOverhead {
		mtu = 1500
	}
	return float64(mbit) * float64(mtu-tunnelTCPOverhead) / float64(mtu+ethernetFraming)
}

func linkSpeedFinding(s *facts.Snapshot, l *facts.Link) finding.Finding {
	mtu := l.MTU
	if mtu <= tunnelTCPOverhead {
		mtu = 1500
	}
	tcpOver := func(mbit int) float64 { return tunnelTCP(l, mbit) }
	if b, ok := hashedBondOf(s, l); ok {
		return bondSpeedFinding(s, l, b, tcpOver)
	}
	ceiling := tcpOver(l.SpeedMbit)
	f := finding.Finding{
		ID:       catalog.NetLinkSpeed,
		Severity: finding.Info,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("%s links at %d Mbit/s: a tunnel over it carries at most about %.0f Mbit/s of TCP", l.Name, l.SpeedMbit, ceiling),
		Detail: fmt.Sprintf("The uplink %s negotiated %d Mbit/s %s duplex. Whatever the plan behind it, that is the ceiling: after "+
			"Ethernet framing and WireGuard's and TCP's headers (MTU %d) about %.0f Mbit/s of TCP fit through a tunnel over it. A faster "+
			"plan needs a faster port, a bond of several (layer3+4 hashing) or ECMP over tunnels on several uplinks.",
			l.Name, l.SpeedMbit, orUnknown(l.Duplex), mtu, ceiling),
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/sys/class/net/" + l.Name + "/speed", Key: l.Name + " speed", Value: strconv.Itoa(l.SpeedMbit) + " Mbit/s"}.Of(float64(l.SpeedMbit), finding.Mbits),
		},
		Fixes: []finding.Fix{{
			Description: "See what the port and its partner can negotiate (Supported and Advertised link modes, Speed, Duplex)",
			Commands:    []string{shell.Join("ethtool", l.Name)},
		}},
	}
	if l.Duplex != "" {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "/sys/class/net/" + l.Name + "/duplex", Key: l.Name + " duplex", Value: l.Duplex, Threshold: "full"})
	}
	if l.Duplex == "half" {
		f.Severity = finding.Warning
		f.Title = fmt.Sprintf("%s runs at half duplex (%d Mbit/s)", l.Name, l.SpeedMbit)
		f.Detail = fmt.Sprintf("The uplink %s negotiated half duplex: it sends or receives, never both, and collides when both ends "+
			"try, so a tunnel's data and its acknowledgements take turns. A half-duplex link today is a cable, a forced speed or "+
			"an autonegotiation mismatch with the switch port.", l.Name)
		f.Fixes = append([]finding.Fix{{
			Description: "Let both ends negotiate (and replace the cable if it stays at half duplex)",
			Commands:    []string{shell.Join("ethtool", "-s", l.Name, "autoneg", "on")},
		}}, f.Fixes...)
	}
	return f
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
