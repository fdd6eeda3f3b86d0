package bench

import (
	"context"

	"github.com/wgperf/wgperf/internal/discover"
)

// Discover fills what was not given from the tunnel between Client and
// Server: the server's tunnel address, its underlay address when underlay is
// wanted (otherwise none: the bench measures the tunnel only), and both ends'
// WireGuard interfaces.
func (c *Config) Discover(ctx context.Context, underlay bool) error {
	if c.TunnelAddr == "" || (c.UnderlayAddr == "" && underlay) {
		ep, err := discover.Tunnel(ctx, c.Client, c.Server)
		if err != nil {
			return err
		}
		if c.TunnelAddr == "" {
			c.TunnelAddr = ep.TunnelAddr
		}
		if c.UnderlayAddr == "" {
			c.UnderlayAddr = ep.UnderlayAddr
		}
		c.ClientInterface, c.ServerInterface = ep.ClientInterface, ep.ServerInterface
		c.ClientPort, c.ServerPort = ep.ClientPort, ep.ServerPort
	}
	if !underlay {
		c.UnderlayAddr = ""
	}
	return nil
}
