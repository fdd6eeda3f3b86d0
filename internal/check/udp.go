package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// udpBufferTarget is the socket buffer size wgperf suggests against drops.
const udpBufferTarget = remedy.UDPBuffer

var udpRcvbufErrors = Check{
	Doc: `Reads Udp RcvbufErrors and SndbufErrors from /proc/net/snmp: any count
above 0 means datagrams — WireGuard's encrypted packets among them — were
dropped at a full socket buffer. Compares net.core.rmem_max/rmem_default (and
wmem_* for send errors) with 25 MiB and offers to raise them. In the relay case the
Synology NAS's 208 KiB rmem_max capped the tunnel at ~200 Mbit/s; 25 MiB took
it to ~450. Kernel WireGuard's socket uses rmem_default; wireguard-go asks for
its own size, bounded by rmem_max unless it runs as root.

Linux also counts a send that failed with ENOBUFS as SndbufErrors, and a full
egress queue (a tbf or htb shaper on a slow uplink) returns ENOBUFS: send
errors alone on a host that shapes a link are reported as info, naming the
shaper, since raising wmem would not help there.

The drops are pinned to a socket where /proc/net/udp was read: its drops
column names the socket that overflowed, and a socket bound to a WireGuard
interface's listen port is the tunnel's. When the tunnel's socket dropped
nothing, the finding is a note about another socket (often a measurement's
own) with no buffer to raise for the tunnel. Kernel WireGuard receives
through the UDP stack's encapsulation hook and sends without a socket buffer,
so on a host whose tunnels are all kernel WireGuard these counters are never
the tunnel's.`,
	Run: runUDPRcvbufErrors,
}

func runUDPRcvbufErrors(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	rcv, ok1 := counter(s, "Udp", "RcvbufErrors")
	snd, ok2 := counter(s, "Udp", "SndbufErrors")
	if !ok1 && !ok2 {
		return nil, missing(s, "Udp counters", "snmp")
	}
	if rcv <= 0 && snd <= 0 {
		return nil, nil
	}
	if note, ok := notTheTunnels(s, rcv, snd); ok {
		return []finding.Finding{note}, nil
	}
	f := finding.Finding{
		ID:       catalog.UDPRcvbufErrors,
		Severity: finding.Warning,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("UDP buffer overflows: %d receive, %d send errors", rcv, snd),
		Detail: "Each error is a UDP datagram the kernel dropped because a socket buffer was full; for WireGuard that is a lost " +
			"tunnel packet, which TCP inside the tunnel reads as congestion and backs off.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors", Value: itoa(rcv), Threshold: "0"}.Of(float64(rcv), finding.Packets),
			finding.Evidence{Source: "/proc/net/snmp", Key: "Udp SndbufErrors", Value: itoa(snd), Threshold: "0"}.Of(float64(snd), finding.Packets),
		},
	}
	if rcv <= 0 {
		if shaped := shapedLinks(s); len(shaped) > 0 {
			f.Severity = finding.Info
			f.Title = fmt.Sprintf("UDP send errors: %d sends found a full queue (shaped uplink %s)", snd, shaped[0])
			f.Detail = "Linux counts a UDP send refused with ENOBUFS as a send buffer error, and a full egress queue of a " +
				"shaper refuses sends the same way; here that queue is the likelier cause, and the tunnel's TCP adapts to it."
			f.Evidence = append(f.Evidence, finding.Evidence{Source: "ip -d link", Key: "qdisc of " + shaped[0], Value: linkQdisc(s, shaped[0]), Threshold: "no shaper"})
			f.Fixes = []finding.Fix{{
				Description: "Confirm the shaper's drops match the errors; keep the tunnel's rate under the uplink's",
				Commands:    []string{shell.Join("tc", "-s", "qdisc", "show", "dev", shaped[0]), "grep Udp: /proc/net/snmp"},
			}}
			return []finding.Finding{f}, nil
		}
	}
	if drops, ok := tunnelSocketDrops(s); ok {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "/proc/net/udp", Key: "drops of the tunnel's socket",
			Value: utoa(drops), Threshold: "0"}.Of(float64(drops), finding.Packets))
	}
	type knob struct {
		key  string
		need bool
	}
	knobs := []knob{
		{"net.core.rmem_max", rcv > 0}, {"net.core.rmem_default", rcv > 0},
		{"net.core.wmem_max", snd > 0}, {"net.core.wmem_default", snd > 0},
	}
	for _, k := range knobs {
		v, ok := sysctlInt(s, k.key)
		if !ok || !k.need {
			continue
		}
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "sysctl", Key: k.key, Value: fmt.Sprintf("%d (%s)", v, mib(v)), Threshold: fmt.Sprintf(">= %d (%s)", udpBufferTarget, mib(udpBufferTarget))}.Of(float64(v), finding.Bytes))
		if v < udpBufferTarget {
			f.Fixes = append(f.Fixes, sysctlFix(fmt.Sprintf("Raise %s from %s to %s", k.key, mib(v), mib(udpBufferTarget)), k.key, itoa(udpBufferTarget))...)
		}
	}
	if len(f.Fixes) == 0 {
		f.Detail += " The buffer limits are already large, so the receiver is not draining its socket fast enough: look at CPU load " +
			"and softirq spreading (cpu.softirq-imbalance) on this host."
		f.Fixes = append(f.Fixes, finding.Fix{
			Description: "Find the CPU bound: watch the WireGuard process and softirq load during a transfer",
			Commands:    []string{"grep Udp: /proc/net/snmp", "cat /proc/net/softnet_stat", "top -b -n 1 -H | head -20"},
		})
	}
	return []finding.Finding{f}, nil
}

// tunnelPorts are the listen ports of the host's WireGuard interfaces.
func tunnelPorts(s *facts.Snapshot) map[int]string {
	out := map[int]string{}
	for _, w := range s.WireGuard {
		if w.ListenPort > 0 {
			out[w.ListenPort] = w.Name
		}
	}
	return out
}

// kernelOnly reports a host whose WireGuard interfaces are all the kernel's.
func kernelOnly(s *facts.Snapshot) bool {
	for _, w := range s.WireGuard {
		if w.Implementation != "kernel" {
			return false
		}
	}
	return len(s.WireGuard) > 0
}

// tunnelSocketDrops sums the drops of the sockets bound to a tunnel's
// listen port; ok is false when the sockets were not collected.
func tunnelSocketDrops(s *facts.Snapshot) (uint64, bool) {
	if s.UDPSockets == nil || len(s.WireGuard) == 0 {
		return 0, false
	}
	ports := tunnelPorts(s)
	var n uint64
	for _, sock := range s.UDPSockets {
		if _, ok := ports[sock.LocalPort]; ok {
			n += sock.Drops
		}
	}
	return n, true
}

// notTheTunnels is the note for buffer errors that cannot be the tunnel's:
// every tunnel is kernel WireGuard (no socket queue, no socket send
// buffer), or the sockets show the tunnel's own dropped nothing.
func notTheTunnels(s *facts.Snapshot, rcv, snd int64) (finding.Finding, bool) {
	tunnel, known := tunnelSocketDrops(s)
	kernel := kernelOnly(s)
	if !kernel && (!known || tunnel > 0 || rcv <= 0) {
		return finding.Finding{}, false
	}
	var others []string
	for _, sock := range s.UDPSockets {
		if _, ok := tunnelPorts(s)[sock.LocalPort]; !ok && sock.Drops > 0 {
			others = append(others, fmt.Sprintf("port %d: %d", sock.LocalPort, sock.Drops))
		}
	}
	where := "sockets that are gone (a measurement's own, or a program that exited)"
	if len(others) > 0 {
		where = "other sockets (" + strings.Join(others, ", ") + ")"
	}
	why := "The tunnel's own socket dropped nothing"
	if kernel {
		why = "Kernel WireGuard receives through the UDP stack's encapsulation hook and sends without a socket buffer, so none of " +
			"these are the tunnel's packets"
	}
	f := finding.Finding{
		ID:       catalog.UDPRcvbufErrors,
		Severity: finding.Info,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("UDP buffer overflows (%d receive, %d send errors), not on the tunnel's socket", rcv, snd),
		Detail:   why + ": the drops were on " + where + ". Raising the buffer limits would not speed up the tunnel.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors", Value: itoa(rcv), Threshold: "0"}.Of(float64(rcv), finding.Packets),
			finding.Evidence{Source: "/proc/net/snmp", Key: "Udp SndbufErrors", Value: itoa(snd), Threshold: "0"}.Of(float64(snd), finding.Packets),
		},
		Fixes: []finding.Fix{{
			Description: "See which program owns the socket that dropped (its buffer is that program's to size)",
			Commands:    []string{"ss -uanpm", "grep Udp: /proc/net/snmp"},
		}},
	}
	if known {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "/proc/net/udp", Key: "drops of the tunnel's socket", Value: utoa(tunnel), Threshold: "0"}.Of(float64(tunnel), finding.Packets))
	}
	if kernel {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "ip -d link", Key: "implementation", Value: "kernel WireGuard (no socket queue)"})
	}
	return f, true
}

// shapedLinks lists links whose root qdisc is a rate shaper.
func shapedLinks(s *facts.Snapshot) []string {
	var out []string
	for _, l := range s.Links {
		switch l.Qdisc {
		case "tbf", "htb", "cake", "hfsc":
			out = append(out, l.Name)
		}
	}
	return out
}

func linkQdisc(s *facts.Snapshot, name string) string {
	for _, l := range s.Links {
		if l.Name == name {
			return l.Qdisc
		}
	}
	return ""
}
