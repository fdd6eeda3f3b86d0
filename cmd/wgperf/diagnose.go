package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/check/diagnose"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/report"
)

func init() {
	var (
		hosts, files []string
		asJSON       bool
		severity     string
		rateMbit     float64
		rtt          time.Duration
		skipFirewall bool
	)
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Find what slows a WireGuard tunnel down, from live hosts or saved snapshots",
		Long: `diagnose collects facts from each --host (in parallel) and reads each --from snapshot,
runs every check on every host, and compares the two ends of each tunnel (matched by
public key). It prints the findings grouped by severity, each with its evidence and
the exact commands and config lines that fix it. Nothing on any host is changed.

Exit codes: 0 nothing at or above --severity warning, 1 warnings, 2 critical findings,
3 could not run (unreachable host, unreadable snapshot).`,
		Example: `  wgperf diagnose
  wgperf diagnose --host ssh:root@golem --host ssh:m42
  wgperf diagnose --from golem.json --from m42.json --json
  wgperf diagnose --host netns:wgl-demo-a --host netns:wgl-demo-b --severity warning`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			minSev, err := finding.ParseSeverity(severity)
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--severity: %v", err)}
			}
			if rateMbit < 0 || rtt < 0 {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--rate and --rtt must not be negative")}
			}
			if len(hosts) == 0 && len(files) == 0 {
				hosts = []string{"local"}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			tty := term.IsTerminal(int(os.Stderr.Fd()))
			opts := diagnose.Options{Check: check.Options{PathRateMbit: rateMbit, PathRTT: rtt}}
			opts.Collect.SkipFirewall = skipFirewall
			if tty && !asJSON {
				opts.Progress = cmd.ErrOrStderr()
			}
			d, err := diagnose.Run(ctx, hosts, files, opts)
			if err != nil {
				return &ExitError{Code: exitFailed, Err: err}
			}
			d = d.AtLeast(minSev)
			if err := render(cmd.OutOrStdout(), d, asJSON); err != nil {
				return &ExitError{Code: exitFailed, Err: err}
			}
			return diagnoseExit(d.Findings)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&hosts, "host", nil, "target to collect from: local, netns:NAME, ssh:[user@]host[:port] (repeatable; default local)")
	f.StringArrayVar(&files, "from", nil, "snapshot file written by wgperf collect (repeatable)")
	f.BoolVar(&asJSON, "json", false, "print the diagnosis as JSON")
	f.StringVar(&severity, "severity", "info", "show only findings at or above this severity: info, warning, critical")
	f.Float64Var(&rateMbit, "rate", check.DefaultPathRateMbit, "path rate in Mbit/s for the bandwidth-delay product TCP buffers must cover")
	f.DurationVar(&rtt, "rtt", check.DefaultPathRTT, "path round-trip time for the bandwidth-delay product")
	f.BoolVar(&skipFirewall, "skip-firewall", false, "do not read nftables, iptables or conntrack (their checks are skipped)")
	rootCmd.AddCommand(cmd)
}

func render(w io.Writer, d report.Diagnosis, asJSON bool) error {
	if asJSON {
		return report.WriteJSON(w, d)
	}
	color := false
	if f, ok := w.(*os.File); ok {
		color = term.IsTerminal(int(f.Fd()))
	}
	return report.WriteText(w, d, report.TextOptions{Color: color})
}

// diagnoseExit maps the worst finding shown to the exit code; info alone is 0.
func diagnoseExit(fs []finding.Finding) error {
	worst, any := finding.Worst(fs)
	switch {
	case !any || worst == finding.Info:
		return nil
	case worst == finding.Critical:
		return &ExitError{Code: exitCritical}
	}
	return &ExitError{Code: exitWarning}
}
