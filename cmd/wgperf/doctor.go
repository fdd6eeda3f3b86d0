package main

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/probe/drops"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/doctor"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probes"
	"github.com/wgperf/wgperf/internal/target"
)

func doctorCmd() *cobra.Command {
	var (
		clientSpec, serverSpec string
		asJSON                 bool
		htmlPath               string
		cfg                    doctor.Config
		dropReasons            bool
		viaSpecs               []string
		prefer                 string
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "One command: why is my tunnel slow? Diagnose, measure, probe, rank the causes",
		Long: `doctor collects both ends of the tunnel and runs every check (cross-host ones
included), benches the tunnel against its underlay (one stream, both ways, with
the hosts' drop counters around every run), and decides: healthy when the tunnel
carries at least 90% of the underlay both ways (one hop) with no warning, slow
otherwise. Only when the evidence calls for it does it run targeted probes:

` + probes.Help() + `
It ranks the causes by the share of the measured shortfall their own evidence
can explain and prints one verdict first (cause, evidence, expected gain, the
exact wgperf fix command), then the rest. A cause present that cannot explain
most of the shortfall (5% steal against a tunnel 18% short) is listed as such,
never the verdict; when nothing explains it, the verdict is "cause not found",
with the layers measured (underlay TCP, UDP outside, tunnel TCP) and what to
measure next.
Without --server it runs the one-ended checks and the DF search to the peer's
endpoint and says what could not be judged.

--via HUB (repeatable, client side first) names the hubs between the two ends (a
road-warrior hub, a multi-hop path): each hop's own underlay is measured (iperf3
between the hop's ends: each hub runs an iperf3 server too), the tunnel is judged
against the slowest hop's (>= 50%), and each hub's CPUs, CPU quotas and stolen
time are read around the bench (cpu.saturated, cpu.quota-throttled on the hub).

A tunnel that collapses in cycles of its own gets the shaping sweep: caps below the
level it climbed to, each held for 60 s or three cycles (--short-sweep: two), per cap
the mean, the slowest second, retransmits and collapses; a steady cap slower than the
uncapped mean is proposed as a trade-off (--prefer mean: none). No cap is proposed
without the sweep.

--fix applies the top cause's remedy as "wgperf fix --apply --verify --confirm"
does (kept only if throughput improved; rolled back on the host unless confirmed),
benches again and confirms once the host answered that bench. Its first "before"
is doctor's own bench (and path MTU search), a later step's the previous step's
"after": nothing is measured twice.

Exit codes: 0 healthy (or info only), 1 warnings, 2 critical findings, 3 could not
run (an end with no WireGuard interface says so in one line);
with --fix, a fix that was kept and confirmed no longer counts (nor the slowness
it cured, when the bench after it is healthy): the status is what remains.`,
		Example: `  wgperf doctor --client local --server ssh:root@m42
  wgperf doctor --client ssh:root@golem --server ssh:root@m42 --json > doctor.json
  wgperf doctor --client netns:wgl-demo-a --server netns:wgl-demo-b --fix --html doctor.html
  wgperf doctor --client ssh:root@golem            # one end only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, err := target.Parse(clientSpec)
			if err != nil {
				return couldNotRun(err)
			}
			if serverSpec != "" {
				if cfg.Server, err = target.Parse(serverSpec); err != nil {
					return couldNotRun(err)
				}
			}
			if cfg.Fix && cfg.Server == nil {
				return couldNotRun(fmt.Errorf("--fix needs --server: a fix is kept only if the tunnel to the other end measures faster"))
			}
			if cfg.Via, err = target.ParseAll(viaSpecs); err != nil {
				return couldNotRun(err)
			}
			if len(cfg.Via) > 0 && cfg.Server == nil {
				return couldNotRun(fmt.Errorf("--via needs --server: it names the hubs between the two ends"))
			}
			cfg.Client, cfg.Progress, cfg.Sweep.Prefer = client, progressLines(), shaping.Prefer(prefer)
			if dropReasons {
				cfg.Drops = drops.ForTarget
			}
			rep, err := doctor.Run(cmd.Context(), cfg)
			if err != nil {
				return couldNotRun(err)
			}
			fs := rep.Remaining()
			if rep.Status == doctor.StatusHealthy {
				fs = nil
			}
			return printResult(cmd.OutOrStdout(), document.Doctor, rep, asJSON, htmlPath, rep.Document, fs)
		},
	}
	f := cmd.Flags()
	f.StringVar(&clientSpec, "client", "local", target.FlagHelp("one end of the tunnel (it runs the iperf3 client)"))
	f.StringVar(&serverSpec, "server", "", "the other end (runs the iperf3 server); without it only one-ended checks run")
	cli.RunSecondsFlag(f, &cfg.Seconds, "time", doctor.DefaultSeconds, "measured seconds per bench run (after 1 s of warm-up)")
	f.IntVar(&cfg.Port, "port", 0, "port of the iperf3 server doctor starts (default 5299)")
	f.StringVar(&cfg.UnderlayAddr, "underlay-addr", "", "the server's address for the underlay baseline (default: the client's peer endpoint)")
	f.IntVar(&cfg.UnderlayPort, "underlay-port", 0, "port of the underlay baseline's iperf3 server: one the far end lets in where only WireGuard's port reaches it (default: --port)")
	dropReasonsFlag(f, &dropReasons)
	f.IntVar(&cfg.Hops, "hops", 1, "WireGuard hops between the two ends (a tunnel over tunnels): above 1 the tunnel should carry 50% of the underlay, the worst hop's")
	viaFlag(f, &viaSpecs)
	f.BoolVar(&cfg.Thorough, "thorough", false, "also a 30 s per-second run and a parallel-stream run (collapse cycles, many flows), whatever the evidence says")
	f.BoolVar(&cfg.UplinkRoutes, "uplink-routes", false, "on a client with several uplinks, also measure the tunnel over each: routes its endpoint through each uplink for a run (journaled, removed after)")
	f.BoolVar(&cfg.Sweep.Short, "short-sweep", false, "the shaping sweep holds each cap for two collapse cycles, not 60 s or three: a cap that collapses less often may pass as steady")
	cli.EnumFlag(f, &prefer, "prefer", string(shaping.PreferSteady), []string{string(shaping.PreferSteady), string(shaping.PreferMean)},
		"when the shaping sweep's steadiest cap is slower than the uncapped mean: steady (propose it, a trade-off) or mean (no cap)")
	f.BoolVar(&cfg.Fix, "fix", false, "apply the top cause's fix (verified, with a confirm window), bench again")
	f.DurationVar(&cfg.Confirm, "confirm", doctor.DefaultConfirm, "with --fix: roll back on the host unless confirmed within this time")
	f.StringVar(&cfg.FixRoot, "root", "/", "root of the configuration files on the fixed host (for tests)")
	_ = f.MarkHidden("root")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON (kind \"doctor\", schema_version)")
	addHTMLFlag(cmd, &htmlPath)
	return cmd
}
