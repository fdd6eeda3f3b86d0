package mtu

import (
	"cmp"
	"context"

	"github.com/wgperf/wgperf/internal/discover"
)

// Discover fills what was not given from the tunnel between Client and
// Server: the underlay address to probe (through a hub, the hub's), the server's tunnel address for MSS
// stepping, both ends' WireGuard interfaces, and the client's address as the
// server reaches it (the one-way count that locates a black hole pings back
// to it). Without a Server it does nothing.
func (c *Config) Discover(ctx context.Context) error {
	if c.Server == nil {
		return nil
	}
	if c.Addr == "" || c.TunnelAddr == "" {
		ep, err := discover.Tunnel(ctx, c.Client, c.Server)
		if err != nil {
			return err
		}
		if c.Addr == "" {
			// Through a hub, the client's packets cross its leg to the hub.
			c.Addr = cmp.Or(ep.UnderlayAddr, ep.Hub.Addr())
		}
		if c.TunnelAddr == "" {
			c.TunnelAddr = ep.TunnelAddr
		}
		c.ClientInterface, c.ServerInterface = ep.ClientInterface, ep.ServerInterface
	}
	if c.BackAddr == "" {
		// Without it the black hole is still found, only not located.
		if back, err := discover.Tunnel(ctx, c.Server, c.Client); err == nil {
			c.BackAddr, c.BackTunnelAddr = back.UnderlayAddr, back.TunnelAddr
		}
	}
	return nil
}
