package parse

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TCPState is a socket's state as /proc/net/tcp prints it (the kernel's
// TCP_* numbers, in hex in the "st" column).
type TCPState uint8

// The states wgperf looks for.
const (
	TCPEstablished TCPState = 0x01
	TCPListen      TCPState = 0x0A
)

// TCPSocket is one row of /proc/net/tcp or /proc/net/tcp6. The ports are
// printed in host order whatever the machine; the addresses in the machine's
// byte order, which the text does not say, so only the ports are kept.
type TCPSocket struct {
	LocalPort, RemotePort int
	State                 TCPState
}

// ParseProcNetTCP reads /proc/net/tcp or /proc/net/tcp6 and returns its
// sockets in state (in the table's order). A row is "sl: local_address
// rem_address st ..." (a TIME_WAIT row has fewer columns after those, an
// open socket more than the header names). It is pure; an error is one line.
func ParseProcNetTCP(r io.Reader, state TCPState) ([]TCPSocket, error) {
	const name = "/proc/net/tcp"
	sc, err := procNetTable(r, name)
	if err != nil {
		return nil, err
	}
	if h := strings.Fields(sc.Text()); len(h) < 4 || h[0] != "sl" || h[1] != "local_address" || h[3] != "st" {
		return nil, fmt.Errorf("%s: header %q does not start \"sl local_address rem_address st\"", name, sc.Text())
	}
	out := []TCPSocket{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 || !strings.HasSuffix(f[0], ":") {
			return nil, fmt.Errorf("%s: row %q is not a socket", name, sc.Text())
		}
		local, err1 := hexPort(f[1])
		remote, err2 := hexPort(f[2])
		st, err3 := strconv.ParseUint(f[3], 16, 8)
		if err1 != nil || err2 != nil || err3 != nil || len(f[3]) != 2 {
			return nil, fmt.Errorf("%s: row %q is not a socket", name, sc.Text())
		}
		if TCPState(st) == state {
			out = append(out, TCPSocket{LocalPort: local, RemotePort: remote, State: TCPState(st)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// procNetTable is a scanner of one of /proc/net's socket tables (name, for
// errors) at its header line, which the caller reads from it.
func procNetTable(r io.Reader, name string) (*bufio.Scanner, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: no header", name)
	}
	return sc, nil
}

// hexPort is the port of an "ADDRESS:PORT" column, both in hex.
func hexPort(s string) (int, error) {
	addr, port, ok := strings.Cut(s, ":")
	if !ok || (len(addr) != 8 && len(addr) != 32) || len(port) != 4 {
		return 0, fmt.Errorf("address %q", s)
	}
	if _, err := strconv.ParseUint(addr[:8], 16, 32); err != nil {
		return 0, err
	}
	p, err := strconv.ParseUint(port, 16, 16)
	return int(p), err
}
