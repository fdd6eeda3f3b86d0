package mtu

import (
	"context"
	"errors"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/target"
)

// Command is "wgperf mtu": its hosts as target specs, the search, and
// whether the MSS is read from a capture instead.
type Command struct {
	// Config is the search; RunCommand sets its hosts from the specs below.
	Config
	ClientSpec, ServerSpec string // --client, --server
	Capture                bool   // --capture
	HTML                   bool   // --html was given: the capture has no HTML report
}

// RunCommand checks c's options, opens its hosts, finds the server's
// addresses from WireGuard and runs the search, or the capture with
// --capture: one of the two results is set. Every error is one line.
func RunCommand(ctx context.Context, c Command) (*Result, *CaptureResult, error) {
	cfg := c.Config
	var err error
	if cfg.Client, err = target.Parse(c.ClientSpec); err != nil {
		return nil, nil, err
	}
	if c.ServerSpec != "" {
		if cfg.Server, err = target.Parse(c.ServerSpec); err != nil {
			return nil, nil, err
		}
		if err := cfg.Discover(ctx); err != nil {
			return nil, nil, discover.WithAddrHint(err)
		}
	}
	switch {
	case c.Capture && c.HTML:
		return nil, nil, errors.New("--html is not available with --capture: use --json")
	case c.Capture && cfg.Server == nil:
		return nil, nil, errors.New("--capture needs --server: tcpdump runs on both ends and iperf3 answers there")
	case cfg.Addr == "":
		return nil, nil, errors.New("give --server (to find its endpoint address) or --addr")
	}
	if c.Capture {
		cc := CaptureConfig{Client: cfg.Client, Server: cfg.Server, Addr: cfg.Addr, ClientInterface: cfg.ClientInterface, Port: cfg.Port, Progress: cfg.Progress}
		res, err := Capture(ctx, cc)
		return nil, res, err
	}
	if cfg.Min < 0 || cfg.Max < 0 || (cfg.Max > 0 && cfg.Min > cfg.Max) {
		return nil, nil, errors.New("--min and --max must be positive, with --min <= --max")
	}
	res, err := Run(ctx, cfg)
	return res, nil, err
}
