package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tables recorded in lab namespaces (testdata/collect/proc/tcp): an iperf3
// server listening on 5299 dual-stack (so in tcp6); one bound to
// 127.0.0.1:5298 with its client's two connections, both ends of each in the
// table; B during a three-client load on 5390-5392 (trimmed), with a
// TIME_WAIT row, which prints fewer columns.
func TestParseProcNetTCP(t *testing.T) {
	tests := []struct {
		file  string
		state TCPState
		want  []TCPSocket
	}{
		{"tcp6-listening-5299", TCPListen, []TCPSocket{{LocalPort: 5299, State: TCPListen}}},
		{"tcp6-listening-5299", TCPEstablished, []TCPSocket{}},
		{"tcp-empty", TCPListen, []TCPSocket{}},
		{"tcp-5298-in-a-test", TCPListen, []TCPSocket{{LocalPort: 5298, State: TCPListen}}},
		{"tcp-5298-in-a-test", TCPEstablished, []TCPSocket{
			{LocalPort: 5298, RemotePort: 0x9466, State: TCPEstablished},
			{LocalPort: 5298, RemotePort: 0x9468, State: TCPEstablished},
			{LocalPort: 0x9466, RemotePort: 5298, State: TCPEstablished},
			{LocalPort: 0x9468, RemotePort: 5298, State: TCPEstablished},
		}},
		{"tcp-load-5390-5392", TCPEstablished, []TCPSocket{
			{LocalPort: 5390, RemotePort: 0xD2F4, State: TCPEstablished},
			{LocalPort: 5391, RemotePort: 0x8A1C, State: TCPEstablished},
			{LocalPort: 5392, RemotePort: 0xB6A2, State: TCPEstablished},
			{LocalPort: 0xD2F4, RemotePort: 5390, State: TCPEstablished},
			{LocalPort: 22, RemotePort: 0x9C40, State: TCPEstablished},
		}},
		{"tcp-load-5390-5392", 0x06, []TCPSocket{{LocalPort: 5392, RemotePort: 0xB6A4, State: 0x06}}},
	}
	for _, tt := range tests {
		got, err := ParseProcNetTCP(openTestdata(t, "proc", "tcp", tt.file), tt.state)
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s state %02X (-want +got)\n%s", tt.file, tt.state, d)
		}
	}
}

// Text that is no socket table is an error, not an empty table.
func TestParseProcNetTCPErrors(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for _, bad := range []string{
		"",
		"garbage\n:14B3 0A",
		"  sl  local_address rem_address\n",
		header + "   0: 0100007F:14B2 00000000:0000\n",
		header + "   0: 0100007F:14B2 00000000:0000 XY 00000000:00000000\n",
		header + "   0: 0100007F:14B2 00000000:0000 100 00000000:00000000\n",
		header + "   0: 0100007F14B2 00000000:0000 0A 00000000:00000000\n",
		header + "   0: 0100007F:114B2 00000000:0000 0A 00000000:00000000\n",
		header + "   0: 0100007G:14B2 00000000:0000 0A 00000000:00000000\n",
		header + "   0 0100007F:14B2 00000000:0000 0A 00000000:00000000\n",
	} {
		if got, err := ParseProcNetTCP(strings.NewReader(bad), TCPListen); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, %v: want a one-line error", bad, got, err)
		}
	}
}
