package lab

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

// RunPings is a monitoring agent's ping (telegraf's ping input, in its
// native mode): one raw ICMP socket that sends burst echo requests to addr
// back to back every period, and reads the replies. On a host whose ICMP
// replies pass a rate limiter, its bursts eat the limiter's budget that the
// health checks' replies need. It runs until SIGTERM.
func RunPings(addr string, burst int, every time.Duration) error {
	dst := net.ParseIP(addr).To4()
	if dst == nil || burst <= 0 || every <= 0 {
		return fmt.Errorf("pings to %q, %d every %v: want an IPv4 address and both above zero", addr, burst, every)
	}
	c, err := icmp.ListenPacket("ip4:icmp", "0.0.0.0")
	if err != nil {
		return fmt.Errorf("raw ICMP socket: %w", err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		buf := make([]byte, 1500)
		for ctx.Err() == nil {
			if _, _, err := c.ReadFrom(buf); err != nil && ctx.Err() != nil {
				return
			}
		}
	}()
	go func() {
		seq := 0
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			for range burst {
				seq++
				m := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: os.Getpid() & 0xffff, Seq: seq & 0xffff, Data: []byte("wgperf-lab")}}
				if b, err := m.Marshal(nil); err == nil {
					_, _ = c.WriteTo(b, &net.IPAddr{IP: dst})
				}
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}

// startPings runs RunPings on node A towards its primary gateway: replies
// come back in through A's (primary) uplink, where an ICMP limit sits.
func (l *Lab) startPings(ctx context.Context) error {
	_, err := l.detach(ctx, l.Nodes["a"], "pings", "lab", "_pings", "--to", primaryGW, "--burst", fmt.Sprint(l.Config.BackgroundPings), "--every", "1s")
	return err
}
