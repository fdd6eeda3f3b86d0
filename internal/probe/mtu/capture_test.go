package mtu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

const captureDir = "../../../testdata/probe/capture"

func readSYNs(t *testing.T, name string) []SYN {
	t.Helper()
	f, err := os.Open(filepath.Join(captureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseTcpdump(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// Recorded in a site-to-site lab (A 198.51.100.2, B 203.0.113.2, iperf3 on
// port 5299), with and without an MSS clamp of 1360 on R, and on an IPv6
// loopback in a namespace of our own.
func TestParseTcpdump(t *testing.T) {
	a, b := "198.51.100.2", "203.0.113.2"
	tests := []struct {
		file string
		want []SYN
	}{
		{"clamp1360-client.txt", []SYN{
			{SrcAddr: a, SrcPort: 35482, DstAddr: b, DstPort: 5299, MSS: 1460},
			{SrcAddr: b, SrcPort: 5299, DstAddr: a, DstPort: 35482, ACK: true, MSS: 1360},
		}},
		{"clamp1360-server.txt", []SYN{
			{SrcAddr: a, SrcPort: 35482, DstAddr: b, DstPort: 5299, MSS: 1360},
			{SrcAddr: b, SrcPort: 5299, DstAddr: a, DstPort: 35482, ACK: true, MSS: 1460},
		}},
		{"ipv6-loopback.txt", []SYN{
			{SrcAddr: "::1", SrcPort: 37460, DstAddr: "::1", DstPort: 5299, MSS: 65476, IPv6: true},
			{SrcAddr: "::1", SrcPort: 5299, DstAddr: "::1", DstPort: 37460, ACK: true, MSS: 65476, IPv6: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readSYNs(t, tt.file)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseTcpdumpLines(t *testing.T) {
	tests := []struct {
		name, in string
		want     []SYN
		err      string
	}{
		{name: "messages only", in: "tcpdump: verbose output suppressed\nlistening on eth0, link-type EN10MB (Ethernet)\n2 packets captured\n"},
		{name: "no MSS option", in: "00:56:20.684178 IP 10.0.0.1.1 > 10.0.0.2.2: Flags [S], seq 1, win 64240, length 0\n",
			want: []SYN{{SrcAddr: "10.0.0.1", SrcPort: 1, DstAddr: "10.0.0.2", DstPort: 2}}},
		{name: "any interface", in: "00:56:20.684178 eth0 Out IP 10.0.0.1.1 > 10.0.0.2.2: Flags [S], seq 1, options [mss 1400], length 0\n",
			want: []SYN{{SrcAddr: "10.0.0.1", SrcPort: 1, DstAddr: "10.0.0.2", DstPort: 2, MSS: 1400}}},
		{name: "not a SYN", in: "00:56:20.684178 IP 10.0.0.1.1 > 10.0.0.2.2: Flags [.], ack 1, length 0\n"},
		{name: "bad address", in: "00:56:20.684178 IP host.1 > 10.0.0.2.2: Flags [S], seq 1\n", err: `line 1: "host.1" is not address.port`},
		{name: "bad MSS", in: "00:56:20.684178 IP 10.0.0.1.1 > 10.0.0.2.2: Flags [S], options [mss 0], length 0\n", err: "bad MSS option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTcpdump(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestAnalyzeCapture(t *testing.T) {
	tests := []struct {
		name            string
		client, server  string
		wgMTU           int
		forward, revers MSSPath
		narrowest, path int
		wg              int
		finding         bool
		err             string
	}{
		{name: "clamp on the router", client: "clamp1360-client.txt", server: "clamp1360-server.txt", wgMTU: 1420,
			forward:   MSSPath{From: "c", To: "s", Segment: "SYN", Sent: 1460, Received: 1360},
			revers:    MSSPath{From: "s", To: "c", Segment: "SYN-ACK", Sent: 1460, Received: 1360},
			narrowest: 1360, path: 1400, wg: 1340, finding: true},
		{name: "clean path", client: "noclamp-client.txt", server: "noclamp-server.txt", wgMTU: 1420,
			forward:   MSSPath{From: "c", To: "s", Segment: "SYN", Sent: 1460, Received: 1460},
			revers:    MSSPath{From: "s", To: "c", Segment: "SYN-ACK", Sent: 1460, Received: 1460},
			narrowest: 1460, path: 1500, wg: 1440},
		{name: "IPv6 outer", client: "ipv6-loopback.txt", server: "ipv6-loopback.txt",
			forward:   MSSPath{From: "c", To: "s", Segment: "SYN", Sent: 65476, Received: 65476},
			revers:    MSSPath{From: "s", To: "c", Segment: "SYN-ACK", Sent: 65476, Received: 65476},
			narrowest: 65476, path: 65536, wg: 65456},
		{name: "server saw nothing", client: "noclamp-client.txt", err: "s on eth0 saw no SYN of port 5299"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &CaptureResult{Client: targettest.Spec("c"), Server: targettest.Spec("s"), Port: 5299, ClientDevice: "eth0", ServerDevice: "eth0", ClientInterface: "wg0", ClientWGMTU: tt.wgMTU}
			var server []SYN
			if tt.server != "" {
				server = readSYNs(t, tt.server)
			}
			err := AnalyzeCapture(res, readSYNs(t, tt.client), server)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.forward, res.Forward); diff != "" {
				t.Errorf("forward (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(tt.revers, res.Reverse); diff != "" {
				t.Errorf("reverse (-want +got)\n%s", diff)
			}
			if res.NarrowestMSS != tt.narrowest || res.PathMTU != tt.path || res.WGMTU != tt.wg {
				t.Errorf("MSS %d, path MTU %d, WireGuard MTU %d; want %d, %d, %d", res.NarrowestMSS, res.PathMTU, res.WGMTU, tt.narrowest, tt.path, tt.wg)
			}
			if got := len(res.Findings) == 1; got != tt.finding {
				t.Fatalf("findings %+v, want one: %v", res.Findings, tt.finding)
			}
			if tt.finding {
				f := res.Findings[0]
				a := f.Fixes[0].Action
				if f.ID != "mtu.tunnel-too-large" || a == nil || a.Params["mtu"] != "1340" || a.Params["interface"] != "wg0" {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}
