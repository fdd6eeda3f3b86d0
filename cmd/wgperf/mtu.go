package main

import (
	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

func mtuCmd() *cobra.Command {
	var (
		c        mtu.Command
		asJSON   bool
		htmlPath string
	)
	cmd := &cobra.Command{
		Use:   "mtu",
		Short: "Find the usable path MTU and the right WireGuard MTU, even when ICMP is blocked",
		Long: `mtu bisects the path MTU from the client to the server's underlay address with
DF pings (ping -M do), re-probing the boundary so one lost probe does not mislead.
When large probes vanish without an ICMP "fragmentation needed" the path is a PMTUD
black hole: mtu then steps the TCP MSS through the tunnel with short iperf3 runs to
locate the cliff (--mss-step forces this). It prints the path MTU, the WireGuard MTU
that fits it (path - 60 for IPv4 outer, - 80 for IPv6), the MSS clamp, and the probes
and seconds it took. Nothing is changed on any host.

--capture uses the tuning guide's other method instead: tcpdump on both ends' underlay
interfaces while one TCP connection (a 1 s iperf3 run) crosses the underlay, then
compares the MSS of the SYN and SYN-ACK as each end sent and received them. A
router that clamps the MSS shows up as "sent 1460, received 1360"; the smallest
MSS + 40 (IPv6: + 60) is the narrowest MTU, and - 60 (- 80) the WireGuard MTU.
It needs --server and tcpdump on both ends.

Exit codes: 0 no finding, 1 WireGuard MTU too large (--capture), 2 black hole
found, 3 could not run.`,
		Example: `  wgperf mtu --client netns:wgl-demo-a --server netns:wgl-demo-b
  wgperf mtu --client local --addr 203.0.113.2
  wgperf mtu --client ssh:root@golem --server ssh:m42 --mss-step
  wgperf mtu --client netns:wgl-demo-a --server netns:wgl-demo-b --capture`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.HTML = htmlPath != ""
			if w := progressTo(); w != nil {
				c.Progress = w
			}
			res, captured, err := mtu.RunCommand(cmd.Context(), c)
			switch {
			case err != nil:
				return couldNotRun(err)
			case captured != nil:
				if err := writeResult(cmd.OutOrStdout(), document.MTUCapture, captured, asJSON); err != nil {
					return couldNotRun(err)
				}
				return findingsExit(captured.Findings)
			}
			return printResult(cmd.OutOrStdout(), document.MTU, res, asJSON, htmlPath, func() report.Document { return report.FromMTU(res) }, res.Findings)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.ClientSpec, "client", "local", target.FlagHelp("target the probes start from"))
	f.StringVar(&c.ServerSpec, "server", "", "the far end (its endpoint and tunnel addresses are found from WireGuard)")
	f.StringVar(&c.Addr, "underlay-addr", "", "underlay address to probe (default: the client's peer endpoint on --server)")
	cli.AliasFlag(f, "addr", "underlay-addr")
	f.StringVar(&c.TunnelAddr, "tunnel-addr", "", "the server's tunnel address for MSS stepping")
	f.IntVar(&c.Min, "min", 0, "smallest path MTU to consider (default 576, IPv6 1280)")
	f.IntVar(&c.Max, "max", 0, "largest path MTU to consider (default: the client's interface MTU towards --addr)")
	f.IntVar(&c.Retries, "retries", 1, "re-probes of the boundary, against lost probes")
	f.BoolVar(&c.MSSStep, "mss-step", false, "step the TCP MSS through the tunnel even if DF probes work (needs --server and iperf3)")
	f.IntVar(&c.Port, "port", 5299, "port of the iperf3 server for MSS stepping")
	f.BoolVar(&c.Capture, "capture", false, "read the negotiated MSS from tcpdump on both ends instead of DF probes (needs --server and tcpdump)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addHTMLFlag(cmd, &htmlPath)
	return cmd
}
