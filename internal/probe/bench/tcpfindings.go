package bench

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// tcpLimitFindings names the buffer that held a single-stream tunnel run,
// as ss read it at the sender: the receiver's window (rwnd_limited) or the
// sender's buffer (sndbuf_limited) for at least LimitedShare of the flow's
// busy time, below the path's BDP (the underlay's rate of the same
// direction times the bench's round trip), with the host's sysctl that
// caps it at under twice the BDP (the window is about half the buffer).
// The finding is tcp.buffers-small on that host, measured.
func tcpLimitFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Path != PathTunnel || run.Streams != 1 || run.UDPMbit > 0 || run.Result == nil || run.TCP == nil {
			continue
		}
		l, _ := senderLimits(run)
		rate, rtt := r.pathMbit(run.Direction), r.rttMs(l)
		if l.flows == 0 || rate <= 0 || rtt <= 0 {
			continue
		}
		bdp := int64(rate * 1e6 / 8 * rtt / 1000)
		path := fmt.Sprintf("%s (%.0f Mbit/s the path carried %s × %.0f ms)", kb(bdp), rate, run.Direction, rtt)
		send, recv := run.Client, run.Server
		if run.Direction == Download {
			send, recv = run.Server, run.Client
		}
		busy := func(key string, ms int64, sh float64) finding.Evidence {
			return finding.Evidence{Source: "ss -tin", Key: fmt.Sprintf("%s of the sender's busy time (tunnel %s)", key, run.Direction),
				Value: fmt.Sprintf("%d of %d ms (%.0f%%)", ms, l.busy, 100*sh), Threshold: fmt.Sprintf("< %.0f%%", 100*LimitedShare)}.Of(100*sh, finding.Percent)
		}
		if sh := l.rwndShare(); sh >= LimitedShare && l.peerWindow > 0 && l.peerWindow < bdp && len(recv.TCPRmem) == 3 && recv.TCPRmem[2] < 2*bdp {
			f := bufferFinding(recv.Host, "net.ipv4.tcp_rmem", recv.TCPRmem, bdp,
				fmt.Sprintf("TCP receive window %s held the tunnel %s %.0f%% of the time: below the path's BDP %s, capped by net.ipv4.tcp_rmem max %s",
					kb(l.peerWindow), run.Direction, 100*sh, path, kb(recv.TCPRmem[2])),
				fmt.Sprintf("The receiver advertises at most about half its buffer as window; %s in flight per %.0f ms round trip is %.0f Mbit/s, whatever the tunnel can carry.",
					kb(l.peerWindow), rtt, float64(l.peerWindow)*8/1e3/rtt))
			f.Evidence = append([]finding.Evidence{busy("rwnd_limited", l.rwnd, sh),
				finding.Evidence{Source: "ss -tin", Key: "receive window the receiver advertised (snd_wnd at the sender)", Value: kb(l.peerWindow),
					Threshold: ">= BDP " + path}.Of(float64(l.peerWindow), finding.Bytes),
				allows("receive window", "window", l.peerWindow, rtt, rate)}, f.Evidence...)
			out = append(out, f)
		}
		if sh := l.sndbufShare(); sh >= LimitedShare && len(send.TCPWmem) == 3 && send.TCPWmem[2] < 2*bdp {
			f := bufferFinding(send.Host, "net.ipv4.tcp_wmem", send.TCPWmem, bdp,
				fmt.Sprintf("TCP send buffer held the tunnel %s %.0f%% of the time: net.ipv4.tcp_wmem max %s is below twice the path's BDP %s",
					run.Direction, 100*sh, kb(send.TCPWmem[2]), path),
				"The sender keeps every byte in flight in its buffer until it is acknowledged; a buffer under the BDP leaves it waiting for room while the path idles.")
			f.Evidence = append([]finding.Evidence{busy("sndbuf_limited", l.sndbuf, sh),
				allows("send buffer", "tcp_wmem max", send.TCPWmem[2], rtt, rate)}, f.Evidence...)
			out = append(out, f)
		}
	}
	return out
}

// AllowsKey is in the key of the evidence that says what rate a measured
// buffer lets one stream reach: doctor holds the finding to it (its
// catalog entry's Doctor.Bound).
const AllowsKey = "allows ("

// allows is that evidence: bytes in flight per round trip, against the
// rate the path carried.
func allows(what, size string, bytes int64, rttMs, pathMbit float64) finding.Evidence {
	mbit := float64(bytes) * 8 / 1e3 / rttMs
	return finding.Evidence{Source: "ss -tin", Key: fmt.Sprintf("rate the %s %s%s / round trip)", what, AllowsKey, size),
		Value: fmt.Sprintf("%.1f Mbit/s", mbit), Threshold: fmt.Sprintf(">= %.0f Mbit/s the path carried", pathMbit)}.Of(mbit, finding.Mbits)
}

// pathMbit is the most the path carried in a direction: the fastest TCP
// run of the underlay, one stream or several. A single stream held by the
// receiver's window is held the same way outside the tunnel, so the
// single-stream underlay alone would hide the limit; no underlay measured,
// no rate.
func (r *Report) pathMbit(dir string) float64 {
	var best float64
	for _, run := range r.Runs {
		if run.Path == PathUnderlay && run.Direction == dir && run.UDPMbit == 0 && run.Result != nil {
			best = max(best, run.Rate())
		}
	}
	return best
}

// rttMs is the bench's round trip through the tunnel: the idle median of
// its pings, else the flows' own least.
func (r *Report) rttMs(l limits) float64 {
	if r.IdleLatency != nil && r.IdleLatency.Tunnel != nil && r.IdleLatency.Tunnel.MedianMs > 0 {
		return r.IdleLatency.Tunnel.MedianMs
	}
	return l.minRTTMs
}

// bufferFinding is tcp.buffers-small on host, measured: the sysctl's value
// as evidence and the fix that raises its maximum to twice the BDP,
// keeping min and default.
func bufferFinding(host target.Spec, key string, triple []int64, bdp int64, title, detail string) finding.Finding {
	want := check.TCPBufferWant(bdp)
	value := fmt.Sprintf("%d %d %d", triple[0], triple[1], want)
	raise, err := remedy.Sysctl(key, value)
	return finding.Finding{
		ID: catalog.TCPBuffersSmall, Severity: finding.Warning, Host: host,
		Title: title, Detail: detail,
		Evidence: []finding.Evidence{finding.Evidence{Source: "sysctl", Key: key, Value: fmt.Sprintf("%d %d %d", triple[0], triple[1], triple[2]),
			Threshold: fmt.Sprintf("max >= %d bytes (twice the BDP)", 2*bdp)}.Of(float64(triple[2]), finding.Bytes)},
		Fixes: remedy.Fixes(fmt.Sprintf("Raise %s's maximum to %s", key, kb(want)), raise, err),
	}
}
