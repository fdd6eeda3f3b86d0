package parse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/facts"
)

// The recordings are `ss -tinH state established '( sport = :5299 or dport
// = :5299 )'` at both ends of the lab's tunnel (100 Mbit/s, 20 ms) 3.5 s
// into a 6 s iperf3 upload: healthy, the receiver's tcp_rmem max at 256 KiB
// (rwnd), the sender's tcp_wmem max at 128 KiB (sndbuf), iperf3 -M 536
// (mss) and a download (reverse: the server, node b, sends).
func TestParseSSTCPInfo(t *testing.T) {
	data := func(name string) facts.TCPSocket {
		t.Helper()
		socks, err := ParseSSTCPInfo(bytes.NewReader(readTestdata(t, "ss", name)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(socks) != 2 {
			t.Fatalf("%s: %d sockets, want iperf3's control and data connections", name, len(socks))
		}
		data := socks[0] // the other is iperf3's control connection
		if socks[1].BytesAcked+socks[1].BytesReceived > data.BytesAcked+data.BytesReceived {
			data = socks[1]
		}
		return data
	}
	want := facts.TCPSocket{Local: "10.77.0.1:35034", Peer: "10.77.0.2:5299", SendQ: 3399936, Congestion: "bbr",
		MSS: 1368, PMTU: 1420, AdvMSS: 1368, Cwnd: 544, Ssthresh: 288, RTTMs: 61.944, MinRTTMs: 19.644,
		BytesAcked: 37887782, SndWnd: 4242432, RcvSpace: 13680, PacingRate: 101041608, DeliveryRate: 91182528, BusyMs: 3432}
	if d := cmp.Diff(want, data("tin-healthy-sender.txt")); d != "" {
		t.Errorf("healthy sender (-want +got)\n%s", d)
	}
	recv := facts.TCPSocket{Local: "[::ffff:10.77.0.2]:5299", Peer: "[::ffff:10.77.0.1]:35034", RecvQ: 8208, Congestion: "bbr",
		MSS: 1368, PMTU: 1420, AdvMSS: 1368, Cwnd: 10, RTTMs: 20.984, MinRTTMs: 20.984, BytesReceived: 38619661,
		SndWnd: 65536, RcvSpace: 902880, PacingRate: 14904392, AppLimited: true}
	if d := cmp.Diff(recv, data("tin-healthy-receiver.txt")); d != "" {
		t.Errorf("healthy receiver (-want +got)\n%s", d)
	}
	for _, c := range []struct {
		file  string
		check func(facts.TCPSocket) bool
	}{
		{"tin-rwnd-sender.txt", func(s facts.TCPSocket) bool { return s.RwndLimitedMs == 1276 && s.BusyMs == 3412 && s.SndWnd == 161152 }},
		{"tin-rwnd-receiver.txt", func(s facts.TCPSocket) bool { return s.RcvSpace == 162520 }},
		{"tin-sndbuf-sender.txt", func(s facts.TCPSocket) bool { return s.SndbufLimitedMs == 2456 && s.BusyMs == 3400 }},
		{"tin-mss-sender.txt", func(s facts.TCPSocket) bool { return s.MSS == 524 && s.PMTU == 1420 }},
		{"tin-reverse-server.txt", func(s facts.TCPSocket) bool { return s.BusyMs == 3444 && s.Cwnd == 614 }},
	} {
		if s := data(c.file); !c.check(s) {
			t.Errorf("%s: %+v", c.file, s)
		}
	}
}

func TestParseSSTCPInfoForms(t *testing.T) {
	// Without -H and a state filter: the header and the state column.
	in := "State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n" +
		"ESTAB 0      0      [fe80::1%eth0]:22 [fe80::2]:5000\n" +
		"\t cubic wscale:7,7 retrans:0/12 rcv_wnd:65536 pacing_rate 1.5Mbps delivery_rate 800Kbps rwnd_limited:10ms(1.0%) newfield:x(y)\n"
	got, err := ParseSSTCPInfo(strings.NewReader(in))
	want := []facts.TCPSocket{{Local: "[fe80::1%eth0]:22", Peer: "[fe80::2]:5000", Congestion: "cubic", Retrans: 12, RcvWnd: 65536,
		PacingRate: 1.5e6, DeliveryRate: 8e5, RwndLimitedMs: 10}}
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Errorf("%v (-want +got)\n%s", err, d)
	}
	// A state filter without -H (as bench runs it): the header has no State.
	withHeader := "Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n" + string(readTestdata(t, "ss", "tin-rwnd-sender.txt"))
	if got, err := ParseSSTCPInfo(strings.NewReader(withHeader)); err != nil || len(got) != 2 || got[1].RwndLimitedMs != 1276 {
		t.Errorf("with a header: %+v, %v", got, err)
	}
	if got, err := ParseSSTCPInfo(strings.NewReader("")); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{
		"\t cubic mss:1448\n",                         // info before a socket
		"0 0 10.0.0.1:1\n",                            // a column short
		"0 0 10.0.0.1:1 \x1b[31m:2\n",                 // not an address
		"0 x 10.0.0.1:1 10.0.0.2:2\n",                 // Send-Q
		"0 0 10.0.0.1:1 10.0.0.2:2\n\t mss:-5\n",      // negative
		"0 0 10.0.0.1:1 10.0.0.2:2\n\t pacing_rate\n", // no value
		"0 0 10.0.0.1:1 10.0.0.2:2\n\t busy:12s\n",    // unit
		"0 0 10.0.0.1:1 10.0.0.2:2\n\t delivery_rate 5Mbit\n",
	} {
		if _, err := ParseSSTCPInfo(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseSSTCPInfo(f *testing.F) {
	for _, name := range []string{"tin-healthy-sender.txt", "tin-healthy-receiver.txt", "tin-rwnd-sender.txt", "tin-sndbuf-sender.txt", "tin-mss-sender.txt", "tin-reverse-server.txt"} {
		f.Add(readTestdata(f, "ss", name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		socks, err := ParseSSTCPInfo(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, s := range socks {
			if !ssAddr(s.Local) || !ssAddr(s.Peer) || s.MSS < 0 || s.RTTMs < 0 || s.PacingRate < 0 || s.BusyMs < 0 {
				t.Fatalf("accepted %+v", s)
			}
		}
	})
}
