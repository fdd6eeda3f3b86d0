//go:build !router

package main

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/scenario"
)

func labRunCmd() *cobra.Command {
	var all, asJSON, catalogRates bool
	var htmlPath, legacyLabName string
	var opts scenario.Options
	cmd := &cobra.Command{
		Use:   "run SCENARIO... | --all",
		Short: "Reproduce a real case in the lab and solve it end to end",
		Long: `lab run builds the lab, breaks it the way a real case's network was broken,
runs "wgperf doctor" between the two sites (it must rank the case's cause
first, and call the healthy lab healthy without a targeted probe), applies the
fix doctor proposes, measures again, prints the before/after table and tears
the lab down. The lab is called "run" (namespaces wgl-run-*) unless --name
names it.

Scenarios: ` + strings.Join(scenario.Names(), ", ") + `

Every node shares this machine's CPUs, so before a scenario runs, lab run
measures what a healthy tunnel of the same shape (delay, tunnels) carries here
and shapes the underlay to 30% of it, at most the catalog's rate; it prints the
rate it chose and why. A machine too slow for even 20 Mbit/s skips the scenario.
The verdict is the tunnel's ratio to the underlay measured in the same run.

The tunnel ends are the kernel's WireGuard where the module loads, else the
embedded wireguard-go (--wireguard chooses; "wgperf lab vm -- wgperf lab run ..."
runs the catalog on a kernel that has the module). A case that cannot happen on
the implementation in use is skipped with the reason.

Persistent configuration a fix writes goes under the lab's own folder, never the
host's /etc. Host sysctls a scenario needs (a child namespace cannot set them)
are restored to their exact previous values. Exit status 1 when a scenario fails.`,
		ValidArgs: scenario.Names(),
		Example: `  wgperf lab run pmtud-blackhole
  wgperf lab run --all --time 10`,
		RunE: func(cmd *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			opts.Exe = exe
			opts.LabName = scenarioLabName(cmd, legacyLabName)
			if !catalogRates && opts.RateMbit == 0 {
				opts.Capacities = &scenario.Capacities{}
			}
			out := cmd.OutOrStdout()
			// The story goes with the table on stdout; with --json, to the
			// terminal on stderr (if any), so the document stays clean.
			story := out
			if asJSON {
				story = progressTo()
			}
			if story != nil {
				opts.Log = story
			}
			err = scenario.RunCommand(cmd.Context(), scenario.LabRun{Names: args, All: all, Options: opts, JSON: asJSON, Color: useColor(out),
				HTML: htmlPath, Version: version}, out)
			var failed *scenario.FailedError
			if errors.As(err, &failed) {
				return &ExitError{Code: exitWarning, Err: err}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "run every scenario")
	cmd.Flags().IntVar(&opts.RateMbit, "rate", 0, "shape every underlay at most this many Mbit/s instead of sizing it to this machine (a slower backup keeps its share); 0 sizes")
	cmd.Flags().BoolVar(&opts.VerdictOnly, "verdict-only", false, "stop after doctor's verdict on the broken lab and judge that alone (no fix, no measurement after it)")
	cmd.Flags().BoolVar(&catalogRates, "catalog-rates", false, "shape underlays at the catalog's rates instead of sizing them to what a healthy tunnel carries on this machine")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	cmd.Flags().Var(cli.LabImplFlag{P: &opts.WireGuard}, "wireguard", "tunnel ends: kernel (the WireGuard module), userspace (embedded wireguard-go) or auto (kernel where the module loads; inside \"lab vm\", kernel)")
	cli.SecondsFlag(cmd.Flags(), &opts.Seconds, "time", scenario.DefaultSeconds, "seconds per throughput measurement after the fix (doctor benches the broken lab at its own 3 s, or this when shorter)")
	// --lab-name was lab run's own flag before it honoured the lab's --name.
	cmd.Flags().StringVar(&legacyLabName, "lab-name", "", "name of the lab the scenarios build")
	_ = cmd.Flags().MarkHidden("lab-name")
	addHTMLFlag(cmd, &htmlPath)
	return cmd
}

// scenarioLabName is the lab lab run builds: the lab's --name when given, else
// the hidden --lab-name lab run had before, else "run" (not the "demo" default
// of lab up, whose lab may be up beside it).
func scenarioLabName(cmd *cobra.Command, legacy string) string {
	if f := cmd.Flags().Lookup("name"); f != nil && f.Changed {
		return labName
	}
	if legacy != "" {
		return legacy
	}
	return "run"
}
