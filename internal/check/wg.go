package check

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// handshakeStale is how old a handshake may be. WireGuard re-keys every 2
// minutes while traffic flows and refuses a session after 3 (RejectAfterTime),
// so a live peer never shows an older one.
const handshakeStale = 3 * time.Minute

var wgHandshakeStale = Check{
	Doc: `For every peer with an endpoint, compares the latest handshake with the
snapshot time: older than 3 minutes (WireGuard's RejectAfterTime) or never.
Critical when traffic is expected — persistent keepalive is on, or the host has
sent data to the peer — since the tunnel is then down; info when the peer is
simply idle (no keepalive, nothing sent since its last handshake). One finding
per interface and severity: a single peer is named in its title; several (a
hub's road warriors gone home) are one finding with their count, the newest
and oldest handshake, the first five in its text and every one in its evidence.`,
	Run: runHandshakeStale,
}

// staleNamed is how many stale peers a finding of several names in its
// detail; its evidence lists them all.
const staleNamed = 5

// stalePeer is a peer whose handshake is old or missing.
type stalePeer struct {
	facts.WGPeer
	age time.Duration // since its latest handshake; 0 when never
}

func (p stalePeer) never() bool { return p.LatestHandshake.IsZero() }

// since is the age as the findings print it: "4m0s ago" or "never".
func (p stalePeer) since() string {
	if p.never() {
		return "never"
	}
	return p.age.Truncate(time.Second).String() + " ago"
}

func runHandshakeStale(s *facts.Snapshot, o Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	now := o.now(s)
	var out []finding.Finding
	for _, w := range s.WireGuard {
		var down, idle []stalePeer
		for _, p := range w.Peers {
			if p.Endpoint == "" {
				continue
			}
			sp := stalePeer{WGPeer: p}
			if !sp.never() {
				if sp.age = now.Sub(p.LatestHandshake); sp.age <= handshakeStale {
					continue
				}
			}
			if p.PersistentKeepalive > 0 || (sp.never() && p.TxBytes > 0) {
				down = append(down, sp)
			} else {
				idle = append(idle, sp)
			}
		}
		for _, g := range []struct {
			sev   finding.Severity
			peers []stalePeer
		}{{finding.Critical, down}, {finding.Info, idle}} {
			switch len(g.peers) {
			case 0:
			case 1:
				out = append(out, staleOne(s, w, g.peers[0], g.sev))
			default:
				out = append(out, staleMany(s, w, g.peers, g.sev))
			}
		}
	}
	return out, nil
}

// staleOne is the finding of the one stale peer of its kind on w.
func staleOne(s *facts.Snapshot, w facts.WGInterface, p stalePeer, sev finding.Severity) finding.Finding {
	expected := sev == finding.Critical
	title := fmt.Sprintf("No handshake ever completed with peer %s (%s)", finding.ShortKey(p.PublicKey), p.Endpoint)
	if !p.never() {
		title = fmt.Sprintf("Latest handshake with peer %s (%s) was %s ago", finding.ShortKey(p.PublicKey), p.Endpoint, p.age.Truncate(time.Second))
	}
	detail := "The peer is idle: nothing has been sent to it and keepalive is off, so no handshake was needed."
	if expected {
		detail = fmt.Sprintf("The host has sent %d bytes to this peer (keepalive every %ds) but no session is live: "+
			"the endpoint is unreachable, its UDP port is filtered, or the keys do not match.", p.TxBytes, p.PersistentKeepalive)
	}
	return finding.Finding{
		ID:        catalog.WGHandshakeStale,
		Severity:  sev,
		Host:      hostOf(s),
		Interface: w.Name,
		Peer:      p.PublicKey,
		Title:     title,
		Detail:    detail,
		Evidence: []finding.Evidence{
			staleEvidence(finding.Evidence{Source: "wg show " + w.Name + " dump", Key: "latest handshake", Value: p.since(), Threshold: "<= " + handshakeStale.String()}, p),
			{Source: "wg show " + w.Name + " dump", Key: "transfer", Value: fmt.Sprintf("rx %d, tx %d bytes", p.RxBytes, p.TxBytes)},
			finding.Evidence{Source: "wg show " + w.Name + " dump", Key: "persistent keepalive", Value: strconv.Itoa(p.PersistentKeepalive)}.Of(float64(p.PersistentKeepalive), finding.Seconds),
		},
		Fixes: []finding.Fix{handshakeFix(w.Name, p.Endpoint)},
	}
}

// staleMany is one finding for several stale peers of one kind on w (a hub's
// offline road warriors): their count, the newest and oldest handshake, the
// first staleNamed by key prefix and endpoint in the detail, and every one
// in the evidence, the most recently lost first.
func staleMany(s *facts.Snapshot, w facts.WGInterface, peers []stalePeer, sev finding.Severity) finding.Finding {
	peers = slices.Clone(peers)
	slices.SortStableFunc(peers, func(a, b stalePeer) int {
		if a.never() != b.never() {
			if a.never() {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.age, b.age)
	})
	src := "wg show " + w.Name + " dump"
	never := 0
	for _, p := range peers {
		if p.never() {
			never++
		}
	}
	span := "none ever shook hands"
	evidence := []finding.Evidence{
		finding.Evidence{Source: src, Key: "stale peers", Value: fmt.Sprintf("%d of %d peers", len(peers), len(w.Peers)),
			Threshold: "latest handshake <= " + handshakeStale.String()}.Of(float64(len(peers)), finding.Count),
	}
	if newest := peers[0]; !newest.never() {
		oldest := peers[len(peers)-1-never] // the never ones sort last
		span = "newest " + newest.since() + ", oldest " + oldest.since()
		evidence = append(evidence,
			staleEvidence(finding.Evidence{Source: src, Key: "newest stale handshake", Value: newest.since()}, newest),
			staleEvidence(finding.Evidence{Source: src, Key: "oldest handshake", Value: oldest.since()}, oldest))
		if never > 0 {
			span += fmt.Sprintf("; %d never", never)
		}
	}
	if never > 0 {
		evidence = append(evidence, finding.Evidence{Source: src, Key: "never shook hands", Value: fmt.Sprintf("%d peers", never)}.Of(float64(never), finding.Count))
	}
	var named []string
	for i, p := range peers {
		if i < staleNamed {
			named = append(named, fmt.Sprintf("%s (%s) %s", finding.ShortKey(p.PublicKey), p.Endpoint, p.since()))
		}
		v := p.since()
		if sev == finding.Critical {
			v += fmt.Sprintf(", tx %d bytes, keepalive %ds", p.TxBytes, p.PersistentKeepalive)
		}
		evidence = append(evidence, staleEvidence(finding.Evidence{Source: src, Key: "peer " + finding.ShortKey(p.PublicKey) + " (" + p.Endpoint + ")", Value: v}, p))
	}
	list := strings.Join(named, ", ")
	if more := len(peers) - len(named); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	title := fmt.Sprintf("%d idle peers of %s have no handshake within %s (%s)", len(peers), w.Name, handshakeStale, span)
	detail := "Stale: " + list + ". Nothing has been sent to them and keepalive is off, so no handshake was needed: " +
		"a hub's road warriors that are offline look like this."
	if sev == finding.Critical {
		title = fmt.Sprintf("%d peers of %s are down: traffic is expected but none shook hands within %s (%s)", len(peers), w.Name, handshakeStale, span)
		detail = "Down: " + list + ". The host sends to them or keeps them alive (persistent keepalive), but no session is live: " +
			"their endpoints are unreachable, their UDP ports filtered, or the keys do not match."
	}
	return finding.Finding{
		ID:        catalog.WGHandshakeStale,
		Severity:  sev,
		Host:      hostOf(s),
		Interface: w.Name,
		Title:     title,
		Detail:    detail + " The evidence lists every one.",
		Evidence:  evidence,
		Fixes:     []finding.Fix{handshakesFix(w.Name, peers[0].Endpoint)},
	}
}

// staleEvidence is e with p's handshake age in seconds, unless it never had one.
func staleEvidence(e finding.Evidence, p stalePeer) finding.Evidence {
	if p.never() {
		return e
	}
	return e.Of(p.age.Truncate(time.Second).Seconds(), finding.Seconds)
}

// handshakesFix is what to look at when several peers of iface have no
// handshake: which they are, then the first one's path.
func handshakesFix(iface, endpoint string) finding.Fix {
	f := handshakeFix(iface, endpoint)
	f.Description = "List the peers' latest handshakes, then check that an endpoint answers on its UDP port and both ends hold each other's public key"
	f.Commands = append([]string{shell.Join("wg", "show", iface, "latest-handshakes")}, f.Commands...)
	return f
}

// handshakeFix is what to look at when a peer's handshake is missing: there
// is nothing to change until the cause is known.
func handshakeFix(iface, endpoint string) finding.Fix {
	return finding.Fix{
		Description: "Check that the endpoint answers on its UDP port and both ends hold each other's public key",
		Commands: []string{
			shell.Join("wg", "show", iface, "endpoints"),
			shell.Join("ip", "route", "get", hostOnly(endpoint)),
			shell.Join("tcpdump", "-ni", "any", "-c", "10", "udp", "port", portOnly(endpoint)),
		},
	}
}

// userspaceFix moves a tunnel to the kernel module.
func userspaceFix(iface string) finding.Fix {
	return finding.Fix{
		Description: "Use the kernel module where the kernel has it (Linux 5.6 and later)",
		Commands:    []string{"modprobe wireguard", shell.Join("wg-quick", "down", iface) + " && " + shell.Join("wg-quick", "up", iface)},
	}
}

// hostOnly strips the port from "host:port" / "[v6]:port".
func hostOnly(endpoint string) string {
	for i := len(endpoint) - 1; i >= 0; i-- {
		if endpoint[i] == ':' {
			h := endpoint[:i]
			if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
				return h[1 : len(h)-1]
			}
			return h
		}
	}
	return endpoint
}

func portOnly(endpoint string) string {
	for i := len(endpoint) - 1; i >= 0; i-- {
		if endpoint[i] == ':' {
			return endpoint[i+1:]
		}
	}
	return "51820"
}

var wgUserspace = Check{
	Doc: `Info. Fires for every WireGuard interface whose implementation is
userspace (a TUN device served by wireguard-go, boringtun...). Every packet
crosses into a process and back, so the ceiling is lower and it depends on that
process's CPU; the relay case's NAS (Synology DSM 7 runs WireGuard in userspace)
piled its packet processing onto one CPU. The kernel module (Linux >= 5.6) avoids it.`,
	Run: runUserspace,
}

func runUserspace(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	var out []finding.Finding
	for _, w := range s.WireGuard {
		if w.Implementation != "userspace" {
			continue
		}
		kind := "tun"
		if l := findLink(s, w.Name); l != nil && l.Kind != "" {
			kind = l.Kind
		}
		out = append(out, finding.Finding{
			ID:        catalog.WGUserspace,
			Severity:  finding.Info,
			Host:      hostOf(s),
			Interface: w.Name,
			Title:     w.Name + " is served by a userspace WireGuard implementation",
			Detail: "Each packet is copied between the kernel and the WireGuard process, which needs its own CPU time; expect a " +
				"lower ceiling than the kernel module and watch that process's CPU under load.",
			Evidence: []finding.Evidence{{Source: "ip -d link show " + w.Name, Key: "link kind", Value: kind, Threshold: "wireguard"}},
			Fixes:    []finding.Fix{userspaceFix(w.Name)},
		})
	}
	return out, nil
}
