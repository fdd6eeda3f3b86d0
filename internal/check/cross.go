package check

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// tunnelEnd is one side of a tunnel found in a snapshot.
type tunnelEnd struct {
	snap  *facts.Snapshot
	iface facts.WGInterface
	peer  facts.WGPeer // this end's entry for the other end
}

// tunnelPair is both ends of one tunnel: a names b as a peer by b's key.
type tunnelPair struct {
	a, b tunnelEnd
	// bKnowsA is false when b's interface has no peer entry for a's key.
	bKnowsA bool
}

// pairTunnels matches interfaces across snapshots by public key: a's interface
// has a peer whose key is b's interface key. Each pair is returned once, with
// a the end from the earlier snapshot (or the one b does not know).
func pairTunnels(snaps []*facts.Snapshot) []tunnelPair {
	type loc struct {
		snap  *facts.Snapshot
		iface facts.WGInterface
	}
	byKey := map[string]loc{}
	for _, s := range snaps {
		for _, w := range s.WireGuard {
			if w.PublicKey != "" {
				byKey[w.PublicKey] = loc{s, w}
			}
		}
	}
	var pairs []tunnelPair
	done := map[[2]string]bool{}
	for _, s := range snaps {
		for _, w := range s.WireGuard {
			for _, p := range w.Peers {
				other, ok := byKey[p.PublicKey]
				if !ok || other.snap == s {
					continue
				}
				k := [2]string{w.PublicKey, p.PublicKey}
				if done[k] || done[[2]string{k[1], k[0]}] {
					continue
				}
				done[k] = true
				pair := tunnelPair{a: tunnelEnd{s, w, p}, b: tunnelEnd{snap: other.snap, iface: other.iface}}
				for _, q := range other.iface.Peers {
					if q.PublicKey == w.PublicKey {
						pair.b.peer, pair.bKnowsA = q, true
					}
				}
				pairs = append(pairs, pair)
			}
		}
	}
	return pairs
}

var crossMTU = CrossCheck{
	Title: "The two ends of a tunnel disagree on its MTU",
	Doc: `Matches both ends of each tunnel by public key. When their MTUs differ,
the narrowest underlay of the connection includes the other end's uplink: if
the larger MTU exceeds the other end's uplink MTU minus WireGuard's overhead
(60 IPv4 / 80 IPv6), packets sent from the larger end cannot arrive
whole — warning, lower it to the smaller value. If both fit, the mismatch is
info: TCP settles on the smaller MSS, but UDP and ICMP still see two MTUs.`,
	Run: runCrossMTU,
}

func runCrossMTU(snaps []*facts.Snapshot, _ Options) []finding.Finding {
	var out []finding.Finding
	for _, p := range pairTunnels(snaps) {
		big, small := p.a, p.b
		if big.iface.MTU == small.iface.MTU || big.iface.MTU <= 0 || small.iface.MTU <= 0 {
			continue
		}
		if big.iface.MTU < small.iface.MTU {
			big, small = small, big
		}
		sev := finding.Info
		evidence := []finding.Evidence{
			finding.Evidence{Source: "ip link (" + hostName(big.snap) + ")", Key: big.iface.Name + " mtu", Value: strconv.Itoa(big.iface.MTU), Threshold: fmt.Sprintf("= %d (the other end)", small.iface.MTU)}.Of(float64(big.iface.MTU), finding.Bytes),
			finding.Evidence{Source: "ip link (" + hostName(small.snap) + ")", Key: small.iface.Name + " mtu", Value: strconv.Itoa(small.iface.MTU)}.Of(float64(small.iface.MTU), finding.Bytes),
		}
		detail := fmt.Sprintf("%s uses %d and %s uses %d. Both fit their own uplinks, but the connection has one MTU; use the smaller on both ends.",
			hostName(big.snap), big.iface.MTU, hostName(small.snap), small.iface.MTU)
		if lim, ok := limitFor(small.snap, small.iface.Name); ok && big.iface.MTU > lim.allowed {
			sev = finding.Warning
			evidence = append(evidence, finding.Evidence{Source: "ip route get " + lim.endpoint + " (" + hostName(small.snap) + ")", Key: lim.dev + " mtu",
				Value: strconv.Itoa(lim.devMTU), Threshold: fmt.Sprintf(">= %d + %d overhead", big.iface.MTU, lim.overhead)}.Of(float64(lim.devMTU), finding.Bytes))
			detail = fmt.Sprintf("%s sends %d-byte tunnel packets, but %s's uplink %s only carries %d-byte WireGuard packets (MTU %d − %d): "+
				"they arrive fragmented or not at all.", hostName(big.snap), big.iface.MTU, hostName(small.snap), lim.dev, lim.allowed, lim.devMTU, lim.overhead)
		}
		out = append(out, finding.Finding{
			ID:        catalog.MTUTunnelTooLarge,
			Severity:  sev,
			Host:      hostOf(big.snap),
			Interface: big.iface.Name,
			Peer:      small.iface.PublicKey,
			Title:     fmt.Sprintf("Tunnel MTU mismatch: %s %s %d, %s %s %d", hostName(big.snap), big.iface.Name, big.iface.MTU, hostName(small.snap), small.iface.Name, small.iface.MTU),
			Detail:    detail,
			Evidence:  evidence,
			Fixes: wgMTUFix(big.snap, big.iface.Name, small.iface.MTU,
				fmt.Sprintf("Lower %s's MTU on %s to %d to match the other end", big.iface.Name, hostName(big.snap), small.iface.MTU)),
		})
	}
	return out
}

var crossHandshake = CrossCheck{
	Title: "Only one end of a tunnel knows the other, or only one saw a handshake",
	Doc: `Matches both ends of each tunnel by public key. Critical when one end lists
the other as a peer but the other end has no peer with this end's key: its
handshakes are silently dropped. Warning when one end reports a handshake within
3 minutes and the other none or an older one (each against its own snapshot
time): the ends are not looking at the same session — usually a stale key or a
second interface with the same key.`,
	Run: runCrossHandshake,
}

func runCrossHandshake(snaps []*facts.Snapshot, _ Options) []finding.Finding {
	var out []finding.Finding
	for _, p := range pairTunnels(snaps) {
		a, b := p.a, p.b
		if !p.bKnowsA {
			out = append(out, finding.Finding{
				ID:        catalog.WGHandshakeStale,
				Severity:  finding.Critical,
				Host:      hostOf(b.snap),
				Interface: b.iface.Name,
				Peer:      a.iface.PublicKey,
				Title:     fmt.Sprintf("%s %s has no peer for %s's key %s", hostName(b.snap), b.iface.Name, hostName(a.snap), finding.ShortKey(a.iface.PublicKey)),
				Detail: fmt.Sprintf("%s %s lists %s as a peer, but %s does not list %s's public key, so every handshake %s sends is dropped.",
					hostName(a.snap), a.iface.Name, b.iface.Name, hostName(b.snap), a.iface.Name, hostName(a.snap)),
				Evidence: []finding.Evidence{
					{Source: "wg show " + a.iface.Name + " dump (" + hostName(a.snap) + ")", Key: "peer", Value: a.peer.PublicKey},
					{Source: "wg show " + b.iface.Name + " dump (" + hostName(b.snap) + ")", Key: "peer " + a.iface.PublicKey, Value: "absent"},
				},
				Fixes: []finding.Fix{{
					Description: fmt.Sprintf("Add %s's public key as a peer of %s on %s", hostName(a.snap), b.iface.Name, hostName(b.snap)),
					Commands:    []string{shell.Join("wg", "set", b.iface.Name, "peer", a.iface.PublicKey, "allowed-ips", tunnelAddress(a))},
					Config:      []finding.ConfigSnippet{{Path: "/etc/wireguard/" + b.iface.Name + ".conf", Lines: []string{"[Peer]", "PublicKey = " + a.iface.PublicKey, "AllowedIPs = " + tunnelAddress(a)}}},
				}},
			})
			continue
		}
		freshA := fresh(a.peer, a.snap.CollectedAt)
		freshB := fresh(b.peer, b.snap.CollectedAt)
		if freshA == freshB {
			continue // both fresh is healthy; both stale is the per-host check's business
		}
		stale, live := b, a
		if freshB {
			stale, live = a, b
		}
		out = append(out, finding.Finding{
			ID:        catalog.WGHandshakeStale,
			Severity:  finding.Warning,
			Host:      hostOf(stale.snap),
			Interface: stale.iface.Name,
			Peer:      live.iface.PublicKey,
			Title:     fmt.Sprintf("One-sided handshake: %s sees a live session with %s, %s does not", hostName(live.snap), hostName(stale.snap), hostName(stale.snap)),
			Detail: "A completed handshake updates both ends at once, so the two should agree. If they do not, the live end is " +
				"talking to another holder of this key (a copied config) or the snapshots were taken minutes apart.",
			Evidence: []finding.Evidence{
				handshakeEvidence(finding.Evidence{Source: "wg show " + live.iface.Name + " dump (" + hostName(live.snap) + ")", Key: "latest handshake"}, live.peer, live.snap.CollectedAt),
				handshakeEvidence(finding.Evidence{Source: "wg show " + stale.iface.Name + " dump (" + hostName(stale.snap) + ")", Key: "latest handshake", Threshold: "<= " + handshakeStale.String()}, stale.peer, stale.snap.CollectedAt),
			},
			Fixes: []finding.Fix{{
				Description: "Compare the keys on both ends and look for a second host using the same private key",
				Commands:    []string{shell.Join("wg", "show", live.iface.Name, "endpoints"), shell.Join("wg", "show", stale.iface.Name, "public-key")},
			}},
		})
	}
	return out
}

// tunnelAddress is an end's own tunnel address as a host prefix, read from the
// source address of its routes over the interface.
func tunnelAddress(e tunnelEnd) string {
	for _, r := range e.snap.Routes {
		if r.Dev == e.iface.Name && r.PrefSrc != "" {
			if familyOf(r.PrefSrc) == "inet6" {
				return r.PrefSrc + "/128"
			}
			return r.PrefSrc + "/32"
		}
	}
	return "<" + hostName(e.snap) + "'s tunnel address>/32"
}

func fresh(p facts.WGPeer, at time.Time) bool {
	return !p.LatestHandshake.IsZero() && at.Sub(p.LatestHandshake) <= handshakeStale
}

// HandshakeAge is p's latest handshake as the texts say it, seen at at:
// "never", or its age ("1m12s ago").
func HandshakeAge(p facts.WGPeer, at time.Time) string {
	if p.LatestHandshake.IsZero() {
		return "never"
	}
	return at.Sub(p.LatestHandshake).Truncate(time.Second).String() + " ago"
}

// handshakeEvidence is e showing p's handshake age at at, in seconds unless never.
func handshakeEvidence(e finding.Evidence, p facts.WGPeer, at time.Time) finding.Evidence {
	e.Value = HandshakeAge(p, at)
	if p.LatestHandshake.IsZero() {
		return e
	}
	return e.Of(at.Sub(p.LatestHandshake).Truncate(time.Second).Seconds(), finding.Seconds)
}
