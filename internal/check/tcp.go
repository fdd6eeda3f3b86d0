package check

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Loss thresholds for tcp.congestion-control: retransmitted segments as a
// share of sent segments, over enough segments to mean something.
const (
	retransRatioThreshold = 0.01
	retransMinOutSegs     = 1000
)

var congestionControl = Check{
	Doc: `Fires when net.ipv4.tcp_congestion_control is cubic or reno and the host's
TCP retransmits at least 1% of the segments it sends (Tcp RetransSegs / OutSegs
in /proc/net/snmp, over at least 1000 segments). The tuning guide: CUBIC is a poor fit
for TCP encapsulated in UDP; it halves its window on every loss, so the window
oscillates, while BBR is far less sensitive to loss. Kernels before 4.20 also
need the fq qdisc for BBR. The bench probe reports its own cwnd-based version
of this finding under the same ID.`,
	Run: runCongestionControl,
}

func runCongestionControl(s *facts.Snapshot, _ Options) ([]finding.Finding, error) {
	cc, ok := s.Sysctls["net.ipv4.tcp_congestion_control"]
	if !ok {
		return nil, missingSysctl(s, "net.ipv4.tcp_congestion_control")
	}
	cc = strings.TrimSpace(cc)
	if cc != "cubic" && cc != "reno" {
		return nil, nil
	}
	retrans, ok1 := counter(s, "Tcp", "RetransSegs")
	out, ok2 := counter(s, "Tcp", "OutSegs")
	if !ok1 || !ok2 {
		return nil, missing(s, "Tcp counters", "snmp")
	}
	if out < retransMinOutSegs {
		return nil, nil
	}
	ratio := float64(retrans) / float64(out)
	if ratio < retransRatioThreshold {
		return nil, nil
	}
	f := finding.Finding{
		ID:       catalog.TCPCongestionControl,
		Severity: finding.Warning,
		Host:     hostOf(s),
		Title:    fmt.Sprintf("TCP uses %s and retransmits %.1f%% of its segments", cc, 100*ratio),
		Detail: fmt.Sprintf("%s treats every loss as congestion and cuts its window, so through a tunnel with some loss the window "+
			"keeps collapsing and throughput oscillates. BBR paces to the measured bottleneck instead. Congestion control is "+
			"chosen by the sender and applies to every TCP connection of the host.", strings.ToUpper(cc)),
		Evidence: []finding.Evidence{
			{Source: "sysctl", Key: "net.ipv4.tcp_congestion_control", Value: cc, Threshold: "not cubic/reno while retransmitting"},
			finding.Evidence{Source: "/proc/net/snmp", Key: "Tcp RetransSegs/OutSegs", Value: fmt.Sprintf("%d/%d = %.2f%%", retrans, out, 100*ratio), Threshold: fmt.Sprintf("< %.0f%%", 100*retransRatioThreshold)}.Of(100*ratio, finding.Percent),
		},
	}
	avail, ok := s.Sysctls["net.ipv4.tcp_available_congestion_control"]
	loadModule := ok && !strings.Contains(" "+avail+" ", " bbr ")
	desc := "Switch TCP congestion control to BBR"
	if before, known := kernelBefore(s, 4, 20); before && known {
		desc += " (with the fq qdisc: this kernel is older than 4.20)"
	}
	r, err := remedy.Congestion("bbr", loadModule, s.System.Kernel)
	f.Fixes = fixes(desc, r, err)
	return []finding.Finding{f}, nil
}

var buffersSmall = Check{
	Doc: `Compares the maximum (third value) of net.ipv4.tcp_rmem and tcp_wmem with
the bandwidth-delay product of the path TCP should fill — by default 1 Gbit/s ×
20 ms = 2.5 MB, set with --rate and --rtt. A window cannot exceed the buffer,
so a smaller maximum caps one connection at buffer/RTT however fast the tunnel
is. The tuning guide lists tcp_rmem/tcp_wmem among the buffers to tune. The fix sets the
maximum to twice the BDP (rounded up to a MiB), keeping min and default.
Before kernel 6.6 the receive window is only part of the buffer:
net.ipv4.tcp_adv_win_scale n leaves it buffer/2^-n for n <= 0 and
buffer - buffer/2^n above (the default 1: half, which the twice-the-BDP fix
already allows for). Where it was changed from 1, the receive side is judged
by that window, and the fix is sized so that window covers the BDP as it does
at the default; from 6.6 the kernel ignores it (the window follows each
socket's measured overhead), and the evidence says so.`,
	Run: runBuffersSmall,
}

func runBuffersSmall(s *facts.Snapshot, o Options) ([]finding.Finding, error) {
	bdp := o.bdpBytes()
	var out []finding.Finding
	seen := 0
	share, scaleEvidence := advWinScale(s)
	for _, key := range []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"} {
		t, ok := sysctlTriple(s, key)
		if !ok {
			continue
		}
		seen++
		// The receive window is share of the buffer where tcp_adv_win_scale
		// was changed (advWinScale); at the default 1 the fix's headroom covers it.
		window, tuned := t[2], key == "net.ipv4.tcp_rmem" && len(scaleEvidence) > 0 && share < 1
		if tuned {
			window = int64(float64(t[2]) * share)
		}
		if window >= bdp {
			continue
		}
		want := tcpBufferWant(bdp)
		if tuned && share < 0.5 {
			// at most what the kernel's int holds, in whole MiB
			want = min(tcpBufferWant(int64(float64(bdp)/share/2)), maxInt&^(1<<20-1))
		}
		value := fmt.Sprintf("%d %d %d", t[0], t[1], want)
		dir := "receive"
		if strings.HasSuffix(key, "wmem") {
			dir = "send"
		}
		title := fmt.Sprintf("TCP %s buffer maximum %s is below the path's BDP (%s)", dir, mib(t[2]), mib(bdp))
		if window != t[2] {
			title = fmt.Sprintf("TCP receive window maximum %s (%s of the %s buffer at tcp_adv_win_scale %s) is below the path's BDP (%s)",
				mib(window), shareWords(share), mib(t[2]), s.Sysctls["net.ipv4.tcp_adv_win_scale"], mib(bdp))
		}
		f := finding.Finding{
			ID:       catalog.TCPBuffersSmall,
			Severity: finding.Warning,
			Host:     hostOf(s),
			Title:    title,
			Detail: fmt.Sprintf("One TCP connection can have at most %s in flight, which caps it at %.0f Mbit/s on a %s round trip "+
				"whatever the tunnel can carry.", mib(window), float64(window)*8/1e6/rttSeconds(o), rttString(o)),
			Evidence: []finding.Evidence{finding.Evidence{Source: "sysctl", Key: key, Value: s.Sysctls[key],
				Threshold: fmt.Sprintf("max >= %d bytes (BDP of %s)", bdp, o.pathDescription())}.Of(float64(t[2]), finding.Bytes)},
			Fixes: sysctlFix(fmt.Sprintf("Raise the %s buffer maximum to %s", dir, mib(want)), key, value),
		}
		if key == "net.ipv4.tcp_rmem" {
			f.Evidence = append(f.Evidence, scaleEvidence...)
		}
		out = append(out, f)
	}
	if seen == 0 {
		return nil, missing(s, "net.ipv4.tcp_rmem/tcp_wmem", "/proc/sys/net/ipv4/tcp_", "sysctl")
	}
	return out, nil
}

func rttSeconds(o Options) float64 {
	if o.PathRTT > 0 {
		return o.PathRTT.Seconds()
	}
	return DefaultPathRTT.Seconds()
}

func rttString(o Options) string {
	if o.PathRTT > 0 {
		return o.PathRTT.String()
	}
	return DefaultPathRTT.String()
}

// tcpBufferWant is the buffer maximum the fix sets: twice the BDP, rounded up
// to a MiB.
func tcpBufferWant(bdp int64) int64 { return (2*bdp + 1<<20 - 1) &^ (1<<20 - 1) }

// TCPBufferWant is the tcp_rmem/tcp_wmem maximum tcp.buffers-small's fix
// sets for a path of this BDP: the bench's measured fix uses the same.
func TCPBufferWant(bdp int64) int64 { return tcpBufferWant(bdp) }
