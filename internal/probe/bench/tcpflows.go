package bench

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// The TCP state of the bench's own flows: ss -tin at both ends, read a few
// times while a tunnel run loads the path (tcpstate.go). What iperf3 reports
// of a run is its sender's view; the kernel's tcp_info says which limit held
// the flow while it had data to send: the peer's receive window
// (rwnd_limited), its own send buffer (sndbuf_limited) or, for the rest, its
// congestion window, and with which segment size.

// minFlowBytes is the least a connection must have carried to be one of the
// run's data flows: iperf3's control connection carries a few hundred bytes.
const minFlowBytes = 64 << 10

// LimitedShare is the share of a flow's busy time spent waiting for a
// window or a buffer that names it the flow's limit.
const LimitedShare = 0.2

// TCPFlow is one data connection of a run at one end, as ss read it last.
type TCPFlow struct {
	End  string `json:"end"`  // client or server
	Role string `json:"role"` // sender or receiver of the data
	// Samples is how many of the run's reads saw the flow.
	Samples int `json:"samples"`
	facts.TCPSocket
}

// TCPState is what ss said of a run's flows at both ends.
type TCPState struct {
	Flows []TCPFlow `json:"flows,omitempty"`
	// Notes say why an end's flows are missing (ss not installed, no
	// answer), once each.
	Notes []string `json:"notes,omitempty"`
}

// FlowState keeps, of each end's samples (one ss output each, in order),
// the connections that carried data, each as its last sample saw it. It is
// pure.
func FlowState(client, server [][]facts.TCPSocket, notes []string) *TCPState {
	if len(client) == 0 && len(server) == 0 && len(notes) == 0 {
		return nil
	}
	st := &TCPState{Notes: notes}
	for _, e := range []struct {
		name    string
		samples [][]facts.TCPSocket
	}{{"client", client}, {"server", server}} {
		last := map[string]int{} // flow -> index in st.Flows
		for _, socks := range e.samples {
			for _, s := range socks {
				key := s.Local + " " + s.Peer
				role := "sender"
				if s.BytesReceived > s.BytesAcked {
					role = "receiver"
				}
				f := TCPFlow{End: e.name, Role: role, Samples: 1, TCPSocket: s}
				if i, ok := last[key]; ok {
					f.Samples = st.Flows[i].Samples + 1
					st.Flows[i] = f
					continue
				}
				last[key] = len(st.Flows)
				st.Flows = append(st.Flows, f)
			}
		}
	}
	kept := st.Flows[:0]
	for _, f := range st.Flows {
		if f.BytesAcked >= minFlowBytes || f.BytesReceived >= minFlowBytes {
			kept = append(kept, f)
		}
	}
	st.Flows = kept
	return st
}

// flows are the state's flows of one end and role.
func (s *TCPState) flows(end, role string) []TCPFlow {
	if s == nil {
		return nil
	}
	var out []TCPFlow
	for _, f := range s.Flows {
		if f.End == end && f.Role == role {
			out = append(out, f)
		}
	}
	return out
}

// limits is what held a run's sending flows: the shares of their busy time
// the peer's receive window and the sender's buffer held them, the rest
// the congestion window's; the smallest window the peer advertised; the
// segment size against what the route's MTU allows.
type limits struct {
	flows                 int
	busy, rwnd, sndbuf    int64 // ms, summed over the flows
	peerWindow            int64 // the smallest advertised window among the flows, bytes
	mss, pmtu, allowedMSS int
	minRTTMs              float64
}

func (l limits) rwndShare() float64   { return share(l.rwnd, l.busy) }
func (l limits) sndbufShare() float64 { return share(l.sndbuf, l.busy) }
func (l limits) cwndShare() float64 {
	if l.busy <= 0 {
		return 0
	}
	return max(0, 1-l.rwndShare()-l.sndbufShare())
}

func share(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// mssLimited reports whether the flow's segments are smaller than the
// route's MTU allows by more than TCP's options can take (40 bytes): a
// clamp rule or the application's TCP_MAXSEG set them.
func (l limits) mssLimited() bool { return l.mss > 0 && l.allowedMSS > 0 && l.mss+40 < l.allowedMSS }

// senderLimits reads the sending end's flows of a run (the client on an
// upload, the server on a download).
func senderLimits(run *Run) (limits, string) {
	end := "client"
	if run.Direction == Download {
		end = "server"
	}
	var l limits
	for _, f := range run.TCP.flows(end, "sender") {
		l.flows++
		l.busy += f.BusyMs
		l.rwnd += f.RwndLimitedMs
		l.sndbuf += f.SndbufLimitedMs
		if f.SndWnd > 0 && (l.peerWindow == 0 || f.SndWnd < l.peerWindow) {
			l.peerWindow = f.SndWnd
		}
		if f.MSS > 0 && (l.mss == 0 || f.MSS < l.mss) {
			l.mss, l.pmtu = f.MSS, f.PMTU
			l.allowedMSS = allowedMSS(f.TCPSocket)
		}
		if f.MinRTTMs > 0 && (l.minRTTMs == 0 || f.MinRTTMs < l.minRTTMs) {
			l.minRTTMs = f.MinRTTMs
		}
	}
	return l, end
}

// allowedMSS is the route's MTU less the IP and TCP headers: 40 bytes over
// IPv4 (a v4-mapped address included), 60 over IPv6; 0 without a pmtu.
func allowedMSS(s facts.TCPSocket) int {
	if s.PMTU <= 0 {
		return 0
	}
	if strings.HasPrefix(s.Local, "[") && !strings.HasPrefix(s.Local, "[::ffff:") {
		return s.PMTU - 60
	}
	return s.PMTU - 40
}

// tcpNote is a run's one line of its flows' TCP state: the sender's
// segment size, window, round trip, retransmits, rates and what held it.
func tcpNote(run *Run) string {
	if run.TCP == nil {
		return ""
	}
	l, end := senderLimits(run)
	if l.flows == 0 {
		if len(run.TCP.Notes) > 0 {
			return "TCP state: " + strings.Join(run.TCP.Notes, "; ")
		}
		return ""
	}
	var cwnd, retrans int64
	var rtt, pacing, delivery float64
	for _, f := range run.TCP.flows(end, "sender") {
		cwnd += f.Cwnd
		retrans += f.Retrans
		rtt = max(rtt, f.RTTMs)
		pacing += f.PacingRate
		delivery += f.DeliveryRate
	}
	flows := ""
	if l.flows > 1 {
		flows = fmt.Sprintf(" (%d flows)", l.flows)
	}
	out := fmt.Sprintf("TCP at the sender (%s)%s: mss %d of %d the route allows, cwnd %d segments, rtt %.0f ms (min %.0f), %d retransmitted, peer window %s, pacing %.1f, delivery %.1f Mbit/s",
		end, flows, l.mss, l.allowedMSS, cwnd, rtt, l.minRTTMs, retrans, kb(l.peerWindow), pacing/1e6, delivery/1e6)
	if l.busy > 0 {
		out += fmt.Sprintf("; of %.1f s busy: receive window %.0f%%, send buffer %.0f%%, congestion window %.0f%%",
			float64(l.busy)/1000, 100*l.rwndShare(), 100*l.sndbufShare(), 100*l.cwndShare())
	}
	if l.mssLimited() {
		out += fmt.Sprintf("; segments of %d bytes where the route's MTU %d allows %d: an MSS clamp rule or the application's TCP_MAXSEG", l.mss, l.pmtu, l.allowedMSS)
	}
	return out
}
