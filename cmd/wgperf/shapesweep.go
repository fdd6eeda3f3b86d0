package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

func shapeSweepCmd() *cobra.Command {
	var (
		clientSpec, serverSpec string
		cfg                    shaping.Config
		asJSON                 bool
		htmlPath               string
	)
	cmd := &cobra.Command{
		Use:   "shape-sweep",
		Short: "Find the tbf rate cap on the tunnel that gives the best stable throughput",
		Long: `shape-sweep measures an upload through the tunnel uncapped, then with a tbf cap on the
client's WireGuard interface at each of --caps, and recommends the cap with the best
stable throughput (or none). The cap is removed after every run, also on error or
Ctrl-C, and a root qdisc that was there before is put back. Run it when bench reports
throughput.oscillation.

Exit codes: 0 no cap needed, 1 a cap is recommended, 3 could not run.`,
		Example: `  wgperf shape-sweep --client netns:wgl-demo-a --server netns:wgl-demo-b --caps 150,200,250,300
  wgperf shape-sweep --client ssh:root@vps --server ssh:nas --caps 150,200 --time 60
  wgperf shape-sweep --client ssh:root@vps --server ssh:nas --html sweep.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, err := target.Parse(clientSpec)
			if err != nil {
				return couldNotRun(err)
			}
			server, err := target.Parse(serverSpec)
			if err != nil {
				return couldNotRun(err)
			}
			if len(cfg.Caps) == 0 {
				return couldNotRun(fmt.Errorf("--caps needs at least one rate in Mbit/s"))
			}
			for _, c := range cfg.Caps {
				if c <= 0 {
					return couldNotRun(fmt.Errorf("--caps: %d is not a positive rate in Mbit/s", c))
				}
			}
			ctx := cmd.Context() // cancelled by SIGINT and SIGTERM (run)
			cfg.Client, cfg.Server = client, server
			if err := cfg.Discover(ctx); err != nil {
				return couldNotRun(withAddrHint(err))
			}
			if w := progressTo(); w != nil {
				cfg.Progress = w
			}
			res, err := shaping.Run(ctx, cfg)
			if err != nil {
				return couldNotRun(err)
			}
			if err := writeResult(cmd.OutOrStdout(), document.ShapeSweep, res, asJSON); err != nil {
				return couldNotRun(err)
			}
			if htmlPath != "" {
				if err := writeHTMLReport(htmlPath, report.FromShapeSweep(res)); err != nil {
					return err
				}
			}
			return findingsExit(res.Findings)
		},
	}
	f := cmd.Flags()
	f.StringVar(&clientSpec, "client", "local", "the sender, whose tunnel interface is capped")
	f.StringVar(&serverSpec, "server", "", "the receiver (required)")
	f.IntSliceVar(&cfg.Caps, "caps", []int{150, 200, 250, 300}, "rate caps to try, Mbit/s")
	f.StringVar(&cfg.TunnelAddr, "tunnel-addr", "", "the server's tunnel address (default: found from wg show)")
	f.StringVar(&cfg.Device, "interface", "", "the client's WireGuard interface to cap (default: found from wg show)")
	aliasFlag(f, "dev", "interface")
	secondsFlag(f, &cfg.Seconds, "time", 10, "measured seconds per run")
	secondsFlag(f, &cfg.Omit, "omit", 3, "warm-up seconds left out of each run")
	f.IntVar(&cfg.Port, "port", 5299, "port of the iperf3 server")
	f.BoolVar(&asJSON, "json", false, "print the sweep, every interval included, as JSON")
	addHTMLFlag(cmd, &htmlPath)
	_ = cmd.MarkFlagRequired("server")
	return cmd
}
