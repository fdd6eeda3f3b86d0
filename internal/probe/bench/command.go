package bench

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
)

// Command is "wgperf bench": its hosts as target specs, and the plan.
type Command struct {
	// Config is the plan; RunCommand sets its hosts from the specs below.
	Config
	ClientSpec, ServerSpec string   // --client, --server
	ClientSpecs            []string // --clients
	Via                    []string // --via
	NoUnderlay             bool     // --no-underlay
	DropReasons            bool     // --drop-reasons
}

// RunCommand checks c's options, opens its hosts, finds the tunnel between
// them (or each hop's with --via) and measures it. Every error is one line
// naming the flag at fault or the host that failed.
func RunCommand(ctx context.Context, c Command) (*Report, error) {
	cfg := c.Config
	var err error
	if cfg.Client, err = target.Parse(c.ClientSpec); err != nil {
		return nil, err
	}
	if cfg.Server, err = target.Parse(c.ServerSpec); err != nil {
		return nil, err
	}
	if cfg.Omit < 0 || cfg.Seconds < 0 || cfg.Parallel < 0 || cfg.UDPMbit < 0 || cfg.Hops < 0 {
		return nil, errors.New("--omit, --time, --parallel, --udp and --hops must not be negative")
	}
	via, err := target.ParseAll(c.Via)
	if err != nil {
		return nil, err
	}
	for _, spec := range c.ClientSpecs {
		t, err := target.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("--clients: %w", err)
		}
		cfg.Clients = append(cfg.Clients, t)
	}
	if len(via) > 0 && len(cfg.Clients) > 0 {
		return nil, errors.New("--clients loads one server through one tunnel: it does not go with --via")
	}
	if len(via) > 0 && (c.NoUnderlay || cfg.UnderlayAddr != "") {
		return nil, errors.New("--via measures each hop's own underlay: it does not go with --no-underlay or --underlay-addr")
	}
	if err := cfg.CheckClients(); err != nil {
		return nil, err
	}
	if c.DropReasons {
		cfg.Drops = drops.ForTarget
	}
	if len(via) > 0 {
		if err := cfg.DiscoverVia(ctx, via); err != nil {
			return nil, err
		}
	} else if err := cfg.Discover(ctx, !c.NoUnderlay); err != nil {
		return nil, discover.WithAddrHint(err)
	}
	if cfg.IperfJSONDir != "" {
		if err := os.MkdirAll(cfg.IperfJSONDir, 0o755); err != nil {
			return nil, fmt.Errorf("--iperf3-json: %v", err)
		}
	}
	return Measure(ctx, cfg)
}
