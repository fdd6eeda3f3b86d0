package main

import (
	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/report"
)

func shapeSweepCmd() *cobra.Command {
	var (
		c        shaping.Command
		asJSON   bool
		htmlPath string
	)
	cmd := &cobra.Command{
		Use:   "shape-sweep",
		Short: "Find the tbf rate cap on the tunnel that holds it steady through its collapse cycles",
		Long: `shape-sweep measures an upload through the tunnel uncapped for --time (at least 60 s),
then with a tbf cap on the client's WireGuard interface at each of --caps (default: 90, 80
and 70% of the level the uncapped run climbed to), each held for 60 s or three of the
uncapped run's collapse cycles, whichever is longer (--short: two cycles). Per cap it
reports the mean, the slowest second, retransmits and collapses, and recommends the
fastest cap that held steady (or none).

When the steady cap is slower than the uncapped mean (the remote users' case: 142 Mbit/s
steady against 165 on average, collapsing every 15-20 s) the recommendation says it is a
trade-off; --prefer steady (the default, for streaming and interactive use) recommends
it, --prefer mean (bulk transfers) keeps no cap. The cap is removed after every run,
also on error or Ctrl-C, and a root qdisc that was there before is put back. Run it when
bench or doctor reports throughput.oscillation.

Exit codes: 0 no cap needed, 1 a cap is recommended, 3 could not run.`,
		Example: `  wgperf shape-sweep --client ssh:root@vps --server ssh:nas
  wgperf shape-sweep --client ssh:root@vps --server ssh:nas --caps 150,200,250,300 --prefer mean
  wgperf shape-sweep --client netns:wgl-demo-a --server netns:wgl-demo-b --short --time 10
  wgperf shape-sweep --client ssh:root@vps --server ssh:nas --html sweep.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w := progressTo(); w != nil {
				c.Progress = w
			}
			res, err := shaping.RunCommand(cmd.Context(), c)
			if err != nil {
				return couldNotRun(err)
			}
			return printResult(cmd.OutOrStdout(), document.ShapeSweep, res, asJSON, htmlPath, func() report.Document { return report.FromShapeSweep(res) }, res.Findings)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.ClientSpec, "client", "local", "the sender, whose tunnel interface is capped")
	f.StringVar(&c.ServerSpec, "server", "", "the receiver (required)")
	f.IntSliceVar(&c.Caps, "caps", []int{}, "rate caps to try, Mbit/s; none: 90, 80 and 70% of the level the uncapped run climbed to")
	f.StringVar(&c.TunnelAddr, "tunnel-addr", "", "the server's tunnel address (default: found from wg show)")
	f.StringVar(&c.Device, "interface", "", "the client's WireGuard interface to cap (default: found from wg show)")
	cli.AliasFlag(f, "dev", "interface")
	cli.SecondsFlag(f, &c.Seconds, "time", shaping.FullHoldSeconds, "measured seconds of the uncapped run and the least each cap is held (below 60 only with --short)")
	f.BoolVar(&c.Short, "short", false, "hold each cap for two of the uncapped run's collapse cycles (at least --time) instead of 60 s or three: a cap that collapses less often may pass as steady")
	cli.EnumFlag(f, &c.PreferName, "prefer", string(shaping.PreferSteady), []string{string(shaping.PreferSteady), string(shaping.PreferMean)},
		"when the steadiest cap is slower than the uncapped mean: steady (recommend it, a trade-off) or mean (no cap)")
	cli.SecondsFlag(f, &c.Omit, "omit", 3, "warm-up seconds left out of each run")
	f.IntVar(&c.Port, "port", 5299, "port of the iperf3 server")
	f.BoolVar(&asJSON, "json", false, "print the sweep, every interval included, as JSON")
	addHTMLFlag(cmd, &htmlPath)
	_ = cmd.MarkFlagRequired("server")
	return cmd
}
