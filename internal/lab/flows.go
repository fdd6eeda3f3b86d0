package lab

import (
	"fmt"
	"net"
	"strconv"
)

// SendFlows opens count short UDP flows to addr, one datagram each from its
// own socket to its own port, so every one is a new connection-tracking entry
// (a hub's many clients, compressed into a second). It needs nothing to listen.
func SendFlows(addr string, count int) error {
	for i := 0; i < count; i++ {
		c, err := net.Dial("udp", net.JoinHostPort(addr, strconv.Itoa(20000+i%40000)))
		if err != nil {
			return fmt.Errorf("flow %d: %w", i, err)
		}
		_, _ = c.Write([]byte("wgperf lab flow"))
		c.Close()
	}
	return nil
}
