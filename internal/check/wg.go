package check

import (
	"fmt"
	"strconv"
	"time"

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
simply idle (no keepalive, nothing sent since its last handshake).`,
	Run: runHandshakeStale,
}

func runHandshakeStale(s *facts.Snapshot, o Options) ([]finding.Finding, error) {
	if len(s.WireGuard) == 0 {
		return nil, noWireGuard(s)
	}
	now := o.now(s)
	var out []finding.Finding
	for _, w := range s.WireGuard {
		for _, p := range w.Peers {
			if p.Endpoint == "" {
				continue
			}
			never := p.LatestHandshake.IsZero()
			age := now.Sub(p.LatestHandshake)
			if !never && age <= handshakeStale {
				continue
			}
			expected := p.PersistentKeepalive > 0 || (never && p.TxBytes > 0)
			sev := finding.Info
			if expected {
				sev = finding.Critical
			}
			value := "never"
			title := fmt.Sprintf("No handshake ever completed with peer %s (%s)", shortKey(p.PublicKey), p.Endpoint)
			if !never {
				value = age.Truncate(time.Second).String() + " ago"
				title = fmt.Sprintf("Latest handshake with peer %s (%s) was %s ago", shortKey(p.PublicKey), p.Endpoint, age.Truncate(time.Second))
			}
			detail := "The peer is idle: nothing has been sent to it and keepalive is off, so no handshake was needed."
			if expected {
				detail = fmt.Sprintf("The host has sent %d bytes to this peer (keepalive every %ds) but no session is live: "+
					"the endpoint is unreachable, its UDP port is filtered, or the keys do not match.", p.TxBytes, p.PersistentKeepalive)
			}
			seen := finding.Evidence{Source: "wg show " + w.Name + " dump", Key: "latest handshake", Value: value, Threshold: "<= " + handshakeStale.String()}
			if !never {
				seen = seen.Of(age.Truncate(time.Second).Seconds(), finding.Seconds)
			}
			out = append(out, finding.Finding{
				ID:        WGHandshakeStale,
				Severity:  sev,
				Host:      hostName(s),
				Interface: w.Name,
				Peer:      p.PublicKey,
				Title:     title,
				Detail:    detail,
				Evidence: []finding.Evidence{
					seen,
					{Source: "wg show " + w.Name + " dump", Key: "transfer", Value: fmt.Sprintf("rx %d, tx %d bytes", p.RxBytes, p.TxBytes)},
					finding.Evidence{Source: "wg show " + w.Name + " dump", Key: "persistent keepalive", Value: strconv.Itoa(p.PersistentKeepalive)}.Of(float64(p.PersistentKeepalive), finding.Seconds),
				},
				Fixes: []finding.Fix{handshakeFix(w.Name, p.Endpoint)},
			})
		}
	}
	return out, nil
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
			ID:        WGUserspace,
			Severity:  finding.Info,
			Host:      hostName(s),
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
