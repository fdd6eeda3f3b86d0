package mtu

import (
	"context"

	"github.com/wgperf/wgperf/internal/discover"
)

// Discover fills what was not given from the tunnel between Client and
// Server: the underlay address to probe, the server's tunnel address for MSS
// stepping and the client's WireGuard interface. Without a Server it does
// nothing.
func (c *Config) Discover(ctx context.Context) error {
	if c.Server == nil || (c.Addr != "" && c.TunnelAddr != "") {
		return nil
	}
	ep, err := discover.Tunnel(ctx, c.Client, c.Server)
	if err != nil {
		return err
	}
	if c.Addr == "" {
		c.Addr = ep.UnderlayAddr
	}
	if c.TunnelAddr == "" {
		c.TunnelAddr = ep.TunnelAddr
	}
	c.ClientInterface = ep.ClientInterface
	return nil
}
