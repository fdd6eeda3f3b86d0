package check

import (
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Below the largest MTU the underlay allows, a tunnel MTU this many bytes
// smaller is a note and this many a warning: 20 is wg-quick's own 1420 on a
// 1500 link with an IPv4 endpoint (it leaves room for an IPv6 one), 60 a
// 1380 chosen for a tunnel inside a tunnel; "1280 to be safe" is 160 below 1440.
const (
	mtuSmallNote    = 80
	mtuSmallWarning = 140
)

var tunnelTooSmall = Check{
	Doc: `For each WireGuard interface, compares its MTU with the largest one its
underlay allows: the link the endpoint routes leave by, minus WireGuard's 60
bytes (IPv4 outer header) or 80 (IPv6), the narrowest endpoint deciding, as
mtu.tunnel-too-large does. An MTU at least 140 bytes below it is a warning,
at least 80 below a note; wg-quick's 1420 on a 1500-byte link (20 below, room
for an IPv6 endpoint) and a 1380 (60 below) stay quiet. Every packet carries the same headers
whatever its size, so a small MTU costs packets and CPU per byte: the remote
users case set "MTU = 1280 to be safe", and the path MTU search later found
1440 fits: "the gap from 1280 to 1440 was costing ~10% throughput per packet
for no benefit". A narrower hop beyond the link would lower the limit, which
only the path MTU search sees: the fix raises the MTU after it confirms, and
fix --verify keeps it only if the tunnel got faster.`,
	Run: runTunnelTooSmall,
}

func runTunnelTooSmall(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	if len(s.Endpoints) == 0 {
		if why := noteFor(s, "ip route get"); why != "" {
			return nil, skipf("endpoint routes not collected (%s)", why)
		}
		return nil, nil
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		lim, ok := limitFor(s, w.Name)
		if !ok || w.MTU <= 0 || lim.allowed-w.MTU < mtuSmallNote {
			continue
		}
		out = append(out, tooSmallFinding(s, w, lim))
	}
	return out, nil
}

func tooSmallFinding(s *facts.Snapshot, w facts.WGInterface, lim underlayLimit) finding.Finding {
	ipv := "IPv4"
	if lim.overhead == overheadIPv6 {
		ipv = "IPv6"
	}
	sev := finding.Info
	if lim.allowed-w.MTU >= mtuSmallWarning {
		sev = finding.Warning
	}
	// Packets per byte carried: headers (WireGuard's and the outer IP/UDP)
	// are paid per packet, so the cost is the ratio of payload per packet.
	more := 100 * (float64(lim.allowed) - float64(w.MTU)) / float64(w.MTU)
	f := finding.Finding{
		ID:        catalog.MTUTunnelTooSmall,
		Severity:  sev,
		Host:      hostOf(s),
		Interface: w.Name,
		Peer:      lim.peer,
		Title:     fmt.Sprintf("%s MTU %d is %d bytes below what %s allows (%d)", w.Name, w.MTU, lim.allowed-w.MTU, lim.dev, lim.allowed),
		Detail: fmt.Sprintf("Traffic to endpoint %s leaves by %s (MTU %d); with an %s outer header WireGuard adds %d bytes, so tunnel "+
			"packets of up to %d bytes fit. At %d the tunnel sends about %.0f%% more packets for the same data, each paying "+
			"the same headers and per-packet work: throughput a CPU- or packet-rate-bound tunnel loses for no benefit. A hop "+
			"narrower than %s further along would lower the limit: run the path MTU search before raising it.",
			lim.endpoint, lim.dev, lim.devMTU, ipv, lim.overhead, lim.allowed, w.MTU, more, lim.dev),
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "ip link", Key: w.Name + " mtu", Value: strconv.Itoa(w.MTU),
				Threshold: fmt.Sprintf(">= %d (%s mtu %d − %d %s overhead, − %d)", lim.allowed-mtuSmallNote+1, lim.dev, lim.devMTU, lim.overhead, ipv, mtuSmallNote-1)}.Of(float64(w.MTU), finding.Bytes),
			{Source: "ip route get " + lim.endpoint, Key: "dev", Value: lim.dev},
			finding.Evidence{Source: "ip link", Key: lim.dev + " mtu", Value: strconv.Itoa(lim.devMTU)}.Of(float64(lim.devMTU), finding.Bytes),
		},
	}
	f.Fixes = append([]finding.Fix{{
		Description: fmt.Sprintf("Confirm the path carries %d-byte tunnel packets (DF probes to the endpoint, MSS stepping through the tunnel)", lim.allowed),
		Commands:    []string{shell.Join("wgperf", "mtu", "--client", hostName(s)) + " --server PEER"},
	}}, wgMTUFix(s, w.Name, lim.allowed, fmt.Sprintf("Raise %s's MTU to %d (on both ends of the tunnel)", w.Name, lim.allowed))...)
	return f
}
