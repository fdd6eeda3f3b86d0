package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

var wgAllowedIPsMismatch = Check{
	Doc: `Reads a kernel WireGuard interface's own counters (ip -s -s -j link): the
module counts a packet from a peer whose inner source address is outside that
peer's AllowedIPs (or that is not IP) in rx_frame_errors, one with a bad inner
length in rx_length_errors, and a packet routed into the interface whose
destination no peer's AllowedIPs cover (or whose peer has no endpoint) in
tx_errors; it drops each silently, and nothing else counts them (not the
firewall, not /proc/net/snmp). Any count above 0 fires: traffic between the
sites whose addresses the two ends' AllowedIPs do not agree on never arrives,
typically a LAN routed into the tunnel on one side and missing from the other
side's AllowedIPs. wireguard-go keeps no such counters, so this only fires on
kernel WireGuard.`,
	Run: runWGAllowedIPsMismatch,
}

func runWGAllowedIPsMismatch(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		l := findLink(s, w.Name)
		if w.Implementation != "kernel" || l == nil || l.Stats == nil {
			continue
		}
		st := l.Stats
		rejected := st.RxFrameErrors + st.RxLengthErrors
		if rejected == 0 && st.TxErrors == 0 {
			continue
		}
		src := "ip -s -s -j link show dev " + w.Name
		f := finding.Finding{
			ID:        catalog.WGAllowedIPsMismatch,
			Severity:  finding.Warning,
			Host:      hostOf(s),
			Interface: w.Name,
			Evidence: []finding.Evidence{
				finding.Evidence{Source: src, Key: "rx_frame_errors (inner source outside the peer's AllowedIPs, or not IP)", Value: utoa(st.RxFrameErrors), Threshold: "0"}.Of(float64(st.RxFrameErrors), finding.Packets),
				finding.Evidence{Source: src, Key: "rx_length_errors (bad inner length)", Value: utoa(st.RxLengthErrors), Threshold: "0"}.Of(float64(st.RxLengthErrors), finding.Packets),
				finding.Evidence{Source: src, Key: "tx_errors (no peer's AllowedIPs cover the destination, or no endpoint)", Value: utoa(st.TxErrors), Threshold: "0"}.Of(float64(st.TxErrors), finding.Packets),
			},
		}
		switch {
		case rejected > 0 && st.TxErrors > 0:
			f.Title = fmt.Sprintf("%s rejected %d packets from its peers and could not send %d: their addresses and AllowedIPs disagree", w.Name, rejected, st.TxErrors)
		case rejected > 0:
			f.Title = fmt.Sprintf("%s rejected %d packets from its peers: their inner source is outside the peer's AllowedIPs", w.Name, rejected)
		default:
			f.Title = fmt.Sprintf("%s could not send %d packets: no peer's AllowedIPs cover their destination", w.Name, st.TxErrors)
		}
		f.Detail = "Kernel WireGuard drops such packets without a word: a peer's packet is accepted only from the addresses its " +
			"AllowedIPs list, and a packet is sent only to a peer whose AllowedIPs cover its destination. Traffic between " +
			"networks the two ends do not both list never arrives, while the tunnel's own addresses work."
		f.Fixes = []finding.Fix{{
			Description: "Name the rejected addresses (the module logs each with dynamic debug), then add them to the right peer's AllowedIPs on both ends",
			Commands: []string{
				shell.Join("wg", "show", w.Name, "allowed-ips"),
				"echo 'module wireguard +p' > /sys/kernel/debug/dynamic_debug/control",
				"dmesg | grep -E 'unallowed src IP|No peer has allowed IPs'",
				"echo 'module wireguard -p' > /sys/kernel/debug/dynamic_debug/control",
			},
		}}
		out = append(out, f)
	}
	return out, nil
}
