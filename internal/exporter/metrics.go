package exporter

import (
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

const ns = "wgperf"

func desc(name, help string, labels ...string) *Desc {
	return newDesc(ns+"_"+name, help, labels...)
}

// The exporter's own health.
var (
	descCollectSuccess   = desc("collect_success", "1 if the latest collection of the host succeeded, 0 if it failed or none finished yet.")
	descCollectDuration  = desc("collect_duration_seconds", "How long the latest collection and checks took.")
	descCollectTimestamp = desc("collect_timestamp_seconds", "Unix time of the latest successful collection; host metrics describe that moment.")
	descCollections      = desc("collections_total", "Collections attempted since the exporter started.")
	descCollectFailures  = desc("collect_failures_total", "Collections that failed since the exporter started.")
)

// WireGuard, per interface and peer.
var (
	descIfaceInfo = desc("wireguard_interface_info", "A WireGuard interface; implementation is kernel, userspace or empty when unknown.",
		"interface", "public_key", "listen_port", "implementation")
	descIfaceMTU  = desc("wireguard_interface_mtu_bytes", "MTU of the WireGuard interface.", "interface")
	descPeerInfo  = desc("wireguard_peer_info", "A WireGuard peer; name is its friendly name from --peer-names, empty when it has none.", "interface", "peer", "name", "allowed_ips")
	descPeerAddr  = desc("wireguard_peer_endpoint_info", "The address of the peer's current endpoint, or \"roaming\" once it has shown 4 addresses within an hour; absent when it has none.", "interface", "peer", "endpoint_ip")
	descPeerPort  = desc("wireguard_peer_endpoint_port", "UDP port of the peer's current endpoint (a value, not a label: NAT rebinding changes it often).", "interface", "peer")
	descHandshake = desc("wireguard_peer_latest_handshake_timestamp_seconds", "Unix time of the peer's latest handshake; 0 means never.", "interface", "peer")
	descHSAge     = desc("wireguard_peer_handshake_age_seconds", "Seconds from the peer's latest handshake to the collection; absent when there was none.", "interface", "peer")
	descRxBytes   = desc("wireguard_peer_receive_bytes_total", "Bytes received from the peer.", "interface", "peer")
	descTxBytes   = desc("wireguard_peer_transmit_bytes_total", "Bytes sent to the peer.", "interface", "peer")
)

// Kernel counters behind the findings (the "metrics to watch" of slow tunnels).
var (
	descUDPRcvbuf    = desc("udp_rcvbuf_errors_total", "UDP datagrams dropped because a socket receive buffer was full (/proc/net/snmp Udp RcvbufErrors).")
	descUDPSndbuf    = desc("udp_sndbuf_errors_total", "UDP datagrams dropped because a socket send buffer was full (Udp SndbufErrors).")
	descUDPInErrors  = desc("udp_in_errors_total", "UDP datagrams received with errors, buffer drops included (Udp InErrors).")
	descTCPRetrans   = desc("tcp_retransmitted_segments_total", "TCP segments retransmitted (/proc/net/snmp Tcp RetransSegs).")
	descTCPOutSegs   = desc("tcp_out_segments_total", "TCP segments sent (Tcp OutSegs); the denominator of the retransmit ratio.")
	descSoftnetProc  = desc("softnet_processed_total", "Packets processed by the CPU's backlog (/proc/net/softnet_stat).", "cpu")
	descSoftnetDrop  = desc("softnet_dropped_total", "Packets dropped because the CPU's backlog was full (netdev_max_backlog).", "cpu")
	descSoftnetSqz   = desc("softnet_time_squeeze_total", "Times the CPU's packet processing ran out of budget with work left.", "cpu")
	descFinding      = desc("finding", "A finding of wgperf's passive checks that is present now (always 1).", "id", "severity", "interface", "peer")
	descFindings     = desc("findings", "How many findings of each severity are present now.", "severity")
	descCheckSkipped = desc("check_skipped", "A check that could not run on the host because the facts it needs were not collected (always 1).", "check")
)

// The exporter process itself, served at /metrics in every mode.
var (
	descBuildInfo = desc("build_info", "Which wgperf build runs: version, VCS revision and branch, build (commit) date, Go version, platform and build tags (always 1).",
		"version", "revision", "branch", "builddate", "goversion", "goos", "goarch", "tags")
	descProbes         = desc("probe_requests_total", "/probe requests, by how they were answered: cached (a collection younger than --probe.cache-ttl), collected, or refused (target not allowed or not valid).", "result")
	descProbeCacheSize = desc("probe_cache_targets", "Targets whose latest collection the /probe cache holds (at most --probe.cache-size).")
)

var selfDescs = []*Desc{descCollectSuccess, descCollectDuration, descCollectTimestamp, descCollections, descCollectFailures}

var allDescs = append(selfDescs[:len(selfDescs):len(selfDescs)],
	descBuildInfo, descProbes, descProbeCacheSize,
	descIfaceInfo, descIfaceMTU, descPeerInfo, descPeerAddr, descPeerPort, descHandshake, descHSAge, descRxBytes, descTxBytes,
	descUDPRcvbuf, descUDPSndbuf, descUDPInErrors, descTCPRetrans, descTCPOutSegs,
	descSoftnetProc, descSoftnetDrop, descSoftnetSqz,
	descFinding, descFindings, descCheckSkipped,
	descKernelDrops, descKernelDropsLost, descKernelDropsTier,
)

// peerLabels names peers and bounds their endpoint labels' churn.
type peerLabels struct {
	names PeerNames
	roam  *roamLimiter // per watched host; nil shows every address
}

// hostMetrics turns one snapshot and its check results into const metrics.
// It runs once per collection, so a scrape only copies the slice.
func hostMetrics(s *facts.Snapshot, res check.Result, pl peerLabels) []metric {
	var out []metric
	add := func(d *Desc, t metricType, v float64, labels ...string) {
		out = append(out, constMetric(d, t, v, labels...))
	}
	// Kernel facts are read through the target's namespace, but "wg show all
	// dump" lists interfaces of every namespace; the collector already keeps
	// only local ones, and a name repeated would break the scrape, so guard.
	if pl.roam != nil {
		pl.roam.mu.Lock()
		defer pl.roam.mu.Unlock()
	}
	seenIface := map[string]bool{}
	present := map[[2]string]bool{}
	for _, w := range s.WireGuard {
		if seenIface[w.Name] {
			continue
		}
		seenIface[w.Name] = true
		add(descIfaceInfo, gauge, 1, w.Name, w.PublicKey, strconv.Itoa(w.ListenPort), w.Implementation)
		if w.MTU > 0 {
			add(descIfaceMTU, gauge, float64(w.MTU), w.Name)
		}
		seenPeer := map[string]bool{}
		for _, p := range w.Peers {
			if seenPeer[p.PublicKey] {
				continue
			}
			seenPeer[p.PublicKey] = true
			present[[2]string{w.Name, p.PublicKey}] = true
			add(descPeerInfo, gauge, 1, w.Name, p.PublicKey, pl.names[p.PublicKey], strings.Join(p.AllowedIPs, ","))
			if addr, port := splitEndpoint(p.Endpoint); addr != "" {
				if pl.roam != nil {
					addr = pl.roam.label(w.Name, p.PublicKey, addr, s.CollectedAt)
				}
				add(descPeerAddr, gauge, 1, w.Name, p.PublicKey, addr)
				if port > 0 {
					add(descPeerPort, gauge, float64(port), w.Name, p.PublicKey)
				}
			}
			hs := 0.0
			if !p.LatestHandshake.IsZero() {
				hs = unixSeconds(p.LatestHandshake)
				age := s.CollectedAt.Sub(p.LatestHandshake).Seconds()
				add(descHSAge, gauge, max(age, 0), w.Name, p.PublicKey)
			}
			add(descHandshake, gauge, hs, w.Name, p.PublicKey)
			add(descRxBytes, counter, float64(p.RxBytes), w.Name, p.PublicKey)
			add(descTxBytes, counter, float64(p.TxBytes), w.Name, p.PublicKey)
		}
	}
	if pl.roam != nil {
		pl.roam.keep(present)
	}

	snmp := func(d *Desc, group, key string) {
		if v, ok := s.Counters.SNMP[group][key]; ok {
			add(d, counter, float64(v))
		}
	}
	snmp(descUDPRcvbuf, "Udp", "RcvbufErrors")
	snmp(descUDPSndbuf, "Udp", "SndbufErrors")
	snmp(descUDPInErrors, "Udp", "InErrors")
	snmp(descTCPRetrans, "Tcp", "RetransSegs")
	snmp(descTCPOutSegs, "Tcp", "OutSegs")

	for _, c := range s.Softnet {
		cpu := strconv.Itoa(c.CPU)
		add(descSoftnetProc, counter, float64(c.Processed), cpu)
		add(descSoftnetDrop, counter, float64(c.Dropped), cpu)
		add(descSoftnetSqz, counter, float64(c.TimeSqueeze), cpu)
	}

	bySeverity := map[finding.Severity]int{}
	seenFinding := map[[4]string]bool{}
	for _, f := range res.Findings {
		// Two findings of one check on the same interface and peer (say, one
		// per endpoint address) are one alert; a repeated series would fail the scrape.
		key := [4]string{string(f.ID), f.Severity.String(), f.Interface, f.Peer}
		if seenFinding[key] {
			continue
		}
		seenFinding[key] = true
		bySeverity[f.Severity]++
		add(descFinding, gauge, 1, key[:]...)
	}
	for _, sev := range []finding.Severity{finding.Info, finding.Warning, finding.Critical} {
		add(descFindings, gauge, float64(bySeverity[sev]), sev.String())
	}

	skipped := map[string]bool{}
	for _, sk := range res.Skipped {
		skipped[string(sk.Check)] = true
	}
	names := make([]string, 0, len(skipped))
	for n := range skipped {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(descCheckSkipped, gauge, 1, n)
	}
	return out
}
