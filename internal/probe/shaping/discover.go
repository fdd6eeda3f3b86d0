package shaping

import (
	"context"

	"github.com/wgperf/wgperf/internal/discover"
)

// Discover fills what was not given from the tunnel between Client and
// Server: the server's tunnel address and the client's WireGuard interface,
// which the sweep caps.
func (c *Config) Discover(ctx context.Context) error {
	if c.TunnelAddr != "" && c.Device != "" {
		return nil
	}
	ep, err := discover.Tunnel(ctx, c.Client, c.Server)
	if err != nil {
		return err
	}
	if c.TunnelAddr == "" {
		c.TunnelAddr = ep.TunnelAddr
	}
	if c.Device == "" {
		c.Device = ep.ClientInterface
	}
	return nil
}
