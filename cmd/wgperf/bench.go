package main

import (
	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

func benchCmd() *cobra.Command {
	var (
		c        bench.Command
		asJSON   bool
		htmlPath string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the tunnel against the link under it with iperf3, both ways",
		Long: `bench runs iperf3 between two hosts through the tunnel and around it (the server's
endpoint address), upload and download (--reverse), one stream and --parallel N,
each after --omit seconds of warm-up. It samples UDP buffer errors, softnet drops
and per-CPU load on both ends around every run, reads its own flows' TCP state
at both ends three times during each tunnel TCP run (ss -tin: MSS, window, round
trip, retransmits, pacing, and how long the receiver's window or the send buffer
held them; a host without ss is noted and skipped), and reports the tunnel/underlay
ratio against the expectation (>= 90% for one hop, >= 50% of the worst hop with
--hops 2 or 3, or --via), asymmetry, periodic collapse, the sender's congestion control
and a TCP buffer that held a stream below the path's bandwidth-delay product.
A cell one run cannot settle (its ratio short of the expectation by less
than one standard error, from the run's own per-second spread) runs again, tunnel and
underlay side by side, up to --samples runs each; its figure is then the median
and the table shows the range.

--via HUB (repeatable, client side first) names the hubs a tunnel runs through
(a road-warrior hub, a multi-hop path): each hop's own underlay is measured
(client to hub, hub to server, iperf3 between the hop's ends, so each hub runs
an iperf3 server too), the tunnel is judged against the slowest hop's, and the
hubs' CPUs are sampled during the tunnel runs.

--clients SPEC,... (the tuning guide's load test: hundreds of connections from
several clients against one server) runs, after the plan, every client at once
(--client and these) through the tunnel to the server, --parallel streams each
(-P, as iperf3's; at most 128 per client, so more connections take more
clients), each against an iperf3 server of its own on --port, --port+1, ...
The clients start together: their servers are held (stopped) until every
client's streams are open. The aggregate is what the server's WireGuard interface received
while every client's connections were open; each client's own run is shown
beside it.

The server's tunnel and underlay addresses are found from WireGuard ("wg show all
dump" on the client, "ip addr" on the server: iproute2's JSON, or BusyBox ip's text
on a router without ip-full); --tunnel-addr and --underlay-addr override them. iperf3 must be installed on both hosts; bench starts a one-off
server on --port and always stops it.

Exit codes: 0 no finding, 1 warnings, 2 critical findings, 3 could not run.`,
		Example: `  wgperf bench --client netns:wgl-demo-a --server netns:wgl-demo-b --quick
  wgperf bench --client local --server ssh:root@m42 --parallel 8 --time 20
  wgperf bench --client local --server ssh:m42 --tunnel-addr 10.0.0.2 --no-underlay --udp 20
  wgperf bench --client ssh:c1 --clients ssh:c2,ssh:c3 --server ssh:hub -P 100 --quick`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w := progressTo(); w != nil {
				c.Progress = w
			}
			rep, err := bench.RunCommand(cmd.Context(), c)
			if err != nil {
				return couldNotRun(err)
			}
			return printResult(cmd.OutOrStdout(), document.Bench, rep, asJSON, htmlPath, func() report.Document { return report.FromBench(rep) }, rep.Findings)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.ClientSpec, "client", "local", target.FlagHelp("target that runs the iperf3 client"))
	f.StringVar(&c.ServerSpec, "server", "", "target that runs the iperf3 server (required)")
	f.StringVar(&c.TunnelAddr, "tunnel-addr", "", "the server's WireGuard address (default: found from wg show)")
	f.StringVar(&c.UnderlayAddr, "underlay-addr", "", "the server's address under the tunnel (default: the client's peer endpoint)")
	dropReasonsFlag(f, &c.DropReasons)
	f.BoolVar(&c.NoUnderlay, "no-underlay", false, "measure only the tunnel (no ratio)")
	f.IntVarP(&c.Parallel, "parallel", "P", 4, "streams of the parallel runs (1 skips them), and of each client with --clients")
	f.StringSliceVar(&c.ClientSpecs, "clients", nil, "more clients (target specs, repeatable or comma-separated) that load the server at once with --client after the plan, --parallel streams each")
	cli.SecondsFlag(f, &c.Omit, "omit", 0, "seconds of warm-up left out of each run (default 3, 1 with --quick)")
	cli.SecondsFlag(f, &c.Seconds, "time", 0, "measured seconds per run (default 10, 3 with --quick)")
	f.BoolVar(&c.Quick, "quick", false, "a shorter plan: single stream only, 1+3 s runs")
	f.IntVar(&c.Samples, "samples", bench.DefaultSamples, "most runs per cell: a cell one run cannot settle (its ratio short of the expectation by less than one standard error) runs again, tunnel and underlay side by side, and is judged by each path's median (1: never repeat)")
	f.Float64Var(&c.UDPMbit, "udp", 0, "also run a UDP control test (loss without TCP) at this rate in Mbit/s, both ways")
	f.IntVar(&c.Hops, "hops", 1, "WireGuard hops between client and server; above 1 the expectation is 50% of the underlay (the worst hop)")
	viaFlag(f, &c.Via)
	f.IntVar(&c.Port, "port", 5299, "port of the iperf3 server bench starts")
	f.IntVar(&c.UnderlayPort, "underlay-port", 0, "port of the underlay runs' iperf3 server: one the far end lets in where only WireGuard's port reaches it (default: --port)")
	f.BoolVar(&asJSON, "json", false, "print the report, every interval included, as JSON (rates in Mbit/s and in bits per second, iperf3's unit)")
	f.StringVar(&c.IperfJSONDir, "iperf3-json", "", "also keep each run's iperf3 -J document in this folder (NN-path-direction-Nstreams.json; no link on its path is followed)")
	addHTMLFlag(cmd, &htmlPath)
	_ = cmd.MarkFlagRequired("server")
	return cmd
}

// findingsExit maps the worst finding of a probe to the exit code.
