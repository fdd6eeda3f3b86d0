package shaping

import (
	"context"
	"fmt"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/target"
)

// Command is "wgperf shape-sweep": its hosts as target specs and the sweep.
type Command struct {
	// Config is the sweep; RunCommand sets its hosts and Prefer from below.
	Config
	ClientSpec, ServerSpec string // --client, --server
	PreferName             string // --prefer: steady or mean
}

// RunCommand checks c's options, opens its hosts, finds the tunnel between
// them and runs the sweep. Every error is one line.
func RunCommand(ctx context.Context, c Command) (*Result, error) {
	cfg := c.Config
	var err error
	if cfg.Client, err = target.Parse(c.ClientSpec); err != nil {
		return nil, err
	}
	if cfg.Server, err = target.Parse(c.ServerSpec); err != nil {
		return nil, err
	}
	if cfg.Seconds < FullHoldSeconds && !cfg.Short {
		return nil, fmt.Errorf("--time %d is shorter than %d s: add --short to accept that a cap which collapses less often may pass as steady", cfg.Seconds, FullHoldSeconds)
	}
	if cfg.Prefer, err = ParsePrefer(c.PreferName); err != nil {
		return nil, err
	}
	for _, c := range cfg.Caps {
		if c <= 0 {
			return nil, fmt.Errorf("--caps: %d is not a positive rate in Mbit/s", c)
		}
	}
	if err := cfg.Discover(ctx); err != nil {
		return nil, discover.WithAddrHint(err)
	}
	return Run(ctx, cfg)
}
