package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/facts"
)

func TestParseSNMPRecorded(t *testing.T) {
	tests := []struct {
		file  string
		proto string
		key   string
		want  int64
	}{
		{"snmp", "Udp", "RcvbufErrors", 0},
		{"snmp", "Udp", "InDatagrams", 39},
		{"snmp", "Tcp", "MaxConn", -1},
		{"snmp", "Tcp", "ActiveOpens", 25},
		{"snmp", "Ip", "Forwarding", 2},
		{"snmp", "IcmpMsg", "InType3", 1},
		{"snmp.netns", "Icmp", "InEchos", 3},
		{"snmp.netns", "Icmp", "OutEchoReps", 3},
		{"netstat", "TcpExt", "TCPOFOQueue", 0},
		{"netstat", "IpExt", "InNoRoutes", 0},
		{"netstat.netns", "TcpExt", "SyncookiesSent", 0},
	}
	cache := map[string]map[string]map[string]int64{}
	for _, tt := range tests {
		m, ok := cache[tt.file]
		if !ok {
			var err error
			m, err = ParseSNMP(openTestdata(t, "proc", tt.file))
			if err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			cache[tt.file] = m
		}
		got, ok := m[tt.proto][tt.key]
		if !ok {
			t.Errorf("%s: %s.%s missing", tt.file, tt.proto, tt.key)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: %s.%s = %d, want %d", tt.file, tt.proto, tt.key, got, tt.want)
		}
	}
	if n := len(cache["netstat"]["TcpExt"]); n < 100 {
		t.Errorf("netstat TcpExt has %d counters, want the full set (>100)", n)
	}
}

func TestParseSNMPErrors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "no counters"},
		{"header only", "Udp: InDatagrams NoPorts\n", "without a value line"},
		{"count mismatch", "Udp: InDatagrams NoPorts\nUdp: 1\n", "2 names but 1 values"},
		{"proto mismatch", "Udp: InDatagrams\nTcp: 1\n", "want values for Udp"},
		{"not a number", "Udp: InDatagrams\nUdp: x\n", "bad value"},
		{"no colon", "garbage\n", "no \"Proto:\" prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSNMP(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseSNMPSaturatesHugeCounters(t *testing.T) {
	m, err := ParseSNMP(strings.NewReader("IpExt: InOctets\nIpExt: 18446744073709551615\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m["IpExt"]["InOctets"]; got != 1<<63-1 {
		t.Errorf("InOctets = %d, want MaxInt64", got)
	}
}

func TestParseSoftnet(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []facts.SoftnetCPU
	}{
		{
			name: "recorded 6.18, two CPUs",
			in:   string(readTestdata(t, "proc", "softnet_stat")),
			want: []facts.SoftnetCPU{
				{CPU: 0, Processed: 0x1d},
				{CPU: 1, Processed: 0x1746},
			},
		},
		{
			// 5.10+ prints the CPU number in column 13, so an offline CPU 1 leaves no gap in rows.
			name: "cpu column with an offline cpu",
			in: "0000a000 00000003 00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000007 00000000 00000000 00000000 00000000 00000000\n" +
				"000000ff 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002 00000000 00000000\n",
			want: []facts.SoftnetCPU{
				{CPU: 0, Processed: 0xa000, Dropped: 3, TimeSqueeze: 0x10, ReceivedRPS: 7},
				{CPU: 2, Processed: 0xff, TimeSqueeze: 1},
			},
		},
		{
			name: "old kernel, 11 columns, row is the cpu",
			in: "00000100 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000004 00000000\n" +
				"00000200 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n",
			want: []facts.SoftnetCPU{
				{CPU: 0, Processed: 0x100, Dropped: 1, TimeSqueeze: 2, ReceivedRPS: 4},
				{CPU: 1, Processed: 0x200},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSoftnet(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestParseSoftnetErrors(t *testing.T) {
	for in, wantErr := range map[string]string{
		"":                           "no rows",
		"00000001 00000002\n":        "at least 3",
		"00000001 0000000g 00000000": "bad hex",
	} {
		if _, err := ParseSoftnet(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseSoftnet(%q) err = %v, want %q", in, err, wantErr)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	got, err := ParseProcStat(openTestdata(t, "proc", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	want := []facts.CPUTimes{
		{CPU: "cpu", User: 13586, System: 4846, Idle: 66487, IOWait: 305, SoftIRQ: 83, Steal: 483},
		{CPU: "cpu0", User: 7328, System: 2251, Idle: 32842, IOWait: 195, SoftIRQ: 30, Steal: 232},
		{CPU: "cpu1", User: 6258, System: 2595, Idle: 33644, IOWait: 109, SoftIRQ: 53, Steal: 250},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestParseProcStatShortAndBad(t *testing.T) {
	// Kernels before 2.6.11 print only user nice system idle.
	got, err := ParseProcStat(strings.NewReader("cpu 1 2 3 4\ncpu0 1 2 3 4\nintr 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Idle != 4 || got[1].IOWait != 0 {
		t.Errorf("got %+v", got)
	}
	for in, wantErr := range map[string]string{
		"intr 1 2\n":     "no cpu lines",
		"cpu0 1 2\n":     "at least 4",
		"cpu0 1 2 x 4\n": "bad number",
	} {
		if _, err := ParseProcStat(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseProcStat(%q) err = %v, want %q", in, err, wantErr)
		}
	}
}

func TestParseNetDev(t *testing.T) {
	const header = "Inter-|   Receive                                                |  Transmit\n" +
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
	tests := []struct {
		name string
		in   string
		want []facts.NetDev
	}{
		{
			// Recorded in a lab namespace after a 4 Gbit/s UDP flood into the tunnel:
			// wireguard-go could not keep up and the TUN device dropped what it sent.
			name: "recorded netns, TUN tx drops",
			in:   string(readTestdata(t, "proc", "net_dev.netns")),
			want: []facts.NetDev{
				{Name: "lo"},
				{Name: "eth0", RxBytes: 1452136, RxPackets: 9758, TxBytes: 128143804, TxPackets: 86242},
				{Name: "wg-wgc1-a", RxBytes: 699204, RxPackets: 9747, TxBytes: 119574857, TxPackets: 56296, TxDropped: 60384},
			},
		},
		{
			name: "a long name runs into its first number",
			in:   header + "wg-site-a:123456789 2 3 4 0 0 0 0 5 6 7 8 0 0 0 0\n",
			want: []facts.NetDev{{Name: "wg-site-a", RxBytes: 123456789, RxPackets: 2, RxErrors: 3, RxDropped: 4,
				TxBytes: 5, TxPackets: 6, TxErrors: 7, TxDropped: 8}},
		},
		{
			name: "columns found by name, not position",
			in:   "x|y|z\n face |packets drop bytes errs|errs drop bytes packets extra\n  e1: 1 2 3 4 5 6 7 8 9\n",
			want: []facts.NetDev{{Name: "e1", RxPackets: 1, RxDropped: 2, RxBytes: 3, RxErrors: 4,
				TxErrors: 5, TxDropped: 6, TxBytes: 7, TxPackets: 8}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNetDev(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestParseNetDevErrors(t *testing.T) {
	const header = "Inter-|   Receive   |  Transmit\n face |bytes packets errs drop|bytes packets errs drop\n"
	for in, wantErr := range map[string]string{
		"":                               "no header",
		"Inter-|\n face bytes packets\n": "not \"face |receive|transmit\"",
		"x\n face |bytes packets errs|bytes packets errs drop\n": "lacks column \"drop\"",
		header:                                                  "no interfaces",
		header + "  eth0 1 2 3 4 5 6 7 8\n":                     "no \"name:\"",
		header + "  : 1 2 3 4 5 6 7 8\n":                        "no \"name:\"",
		header + "  eth0: 1 2 3 4 5 6 7\n":                      "7 values, the header names 8",
		header + "  eth0: 1 2 3 4 5 6 7 -8\n":                   "bad number \"-8\"",
		header + "  e: 1 2 3 4 5 6 7 8\n  e: 1 2 3 4 5 6 7 8\n": "listed twice",
	} {
		if _, err := ParseNetDev(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseNetDev(%q) err = %v, want %q", in, err, wantErr)
		}
	}
}

func TestParseProcNetUDP(t *testing.T) {
	tests := []struct {
		name, family string
		in           []byte
		want         []facts.UDPSocket
	}{
		{
			// A socket with a 4 KiB buffer that 200 datagrams overflowed, and an unbound sender.
			name: "recorded drops", family: "inet", in: readTestdata(t, "proc", "udp.drops"),
			want: []facts.UDPSocket{
				{Family: "inet", LocalPort: 5201, RxQueue: 0x1b00, Drops: 197, Inode: 924170},
				{Family: "inet", LocalPort: 58401, Inode: 924172},
			},
		},
		{name: "recorded udp6", family: "inet6", in: readTestdata(t, "proc", "udp6"),
			want: []facts.UDPSocket{{Family: "inet6", LocalPort: 51820, Inode: 924171}}},
		{
			// Kernel WireGuard's socket: it receives through the encapsulation hook, never queues, never drops.
			name: "kernel WireGuard", family: "inet", in: readTestdata(t, "kernelwg", "proc-net-udp"),
			want: []facts.UDPSocket{{Family: "inet", LocalPort: 51820, Inode: 11679}},
		},
		{name: "no sockets", family: "inet", in: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"),
			want: []facts.UDPSocket{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcNetUDP(strings.NewReader(string(tt.in)), tt.family)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	for _, bad := range []string{"", "sl local_address\n", "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n 1: 0100007F:ZZZZ 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 1 2 0 0\n"} {
		if _, err := ParseProcNetUDP(strings.NewReader(bad), "inet"); err == nil {
			t.Errorf("ParseProcNetUDP(%q): no error", bad)
		}
	}
}
