package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

func icmpBurstCmd() *cobra.Command {
	var (
		hostSpec string
		targets  []string
		cfg      icmpburst.Config
		asJSON   bool
		htmlPath string
	)
	cmd := &cobra.Command{
		Use:   "icmp-burst",
		Short: "One-shot pings vs one persistent ping, to expose an ICMP rate limiter",
		Long: `icmp-burst pings each target --count times as separate one-shot processes (the way
mwan3 and other health checkers do; it stops at the fifth lost reply, which proves
the limiter, as each costs a whole --wait), then --count times from one persistent ping
per target. If the one-shot pings fail and the persistent ones do not, a rate limiter
drops reply bursts; the firewall counters (nft, iptables-save -c) read before and after
show which rule or chain policy grew, and which ICMP limit it drops the excess of.
It only sends pings; nothing on the host is changed.

Exit codes: 0 no difference, 1 rate limiter found, 3 could not run.`,
		Example: `  wgperf icmp-burst --host ssh:root@golem --targets 8.8.8.8,1.1.1.1,208.67.222.222
  wgperf icmp-burst --host netns:wgl-demo-a --targets 198.51.100.1,203.0.113.2 --count 15
  wgperf icmp-burst --host ssh:root@golem --targets 8.8.8.8,1.1.1.1 --html icmp.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, err := target.Parse(hostSpec)
			if err != nil {
				return couldNotRun(err)
			}
			if len(targets) == 0 {
				return couldNotRun(fmt.Errorf("--targets is required: the addresses the health checks ping"))
			}
			if cfg.Count < 1 || cfg.Count > 1000 {
				return couldNotRun(fmt.Errorf("--count must be between 1 and 1000"))
			}
			cfg.Host, cfg.Targets = host, targets
			ctx := cmd.Context() // cancelled by SIGINT and SIGTERM (run)
			res, err := icmpburst.Run(ctx, cfg)
			if err != nil {
				return couldNotRun(err)
			}
			return printResult(cmd.OutOrStdout(), document.ICMPBurst, res, asJSON, htmlPath, func() report.Document { return report.FromICMPBurst(res) }, res.Findings)
		},
	}
	f := cmd.Flags()
	f.StringVar(&hostSpec, "host", "local", target.FlagHelp("target that sends the pings"))
	f.StringSliceVar(&targets, "targets", nil, "addresses to ping, comma-separated")
	f.IntVar(&cfg.Count, "count", 20, "pings per target in each mode")
	cli.SecondsFlag(f, &cfg.Wait, "wait", 1, "seconds each ping waits for its reply (ping -W)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addHTMLFlag(cmd, &htmlPath)
	return cmd
}
