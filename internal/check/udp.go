package check

import (
	"fmt"

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
shaper, since raising wmem would not help there.`,
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
	f := finding.Finding{
		ID:       UDPRcvbufErrors,
		Severity: finding.Warning,
		Host:     hostName(s),
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
