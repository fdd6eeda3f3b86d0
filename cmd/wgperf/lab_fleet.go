//go:build !router

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/lab"
)

// labFleetCmd is "wgperf lab fleet up|down": many small ssh routers, a fleet to measure the exporter and diagnose against.
func labFleetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Start or remove a fleet of OpenWrt-like ssh routers, as many as this machine holds",
		Long: `A fleet is many small routers, each its own network namespace (wgl-NAME-fN) with its own
dropbear on port 22, a BusyBox userland with wg and nft, and a WireGuard interface wg0
with a few peers. Their WireGuard state is served by one process for the whole fleet
(no tunnel traffic: a fleet is for collecting), so a router costs a dropbear, a
namespace and a veth pair. They share a bridge in namespace wgl-NAME-hub
(10.200.0.0/16), from where ssh reaches them: run the exporter or diagnose there
(ip netns exec wgl-NAME-hub ...) with the fleet's ssh_config Included from
~/.ssh/config. "fleet up" writes an Ansible inventory (groups fleet, dead, slow) and
prints how many routers it started and what stopped it growing.`,
	}
	cmd.AddCommand(labFleetUpCmd(), labFleetDownCmd())
	return cmd
}

func labFleetUpCmd() *cobra.Command {
	var cfg lab.FleetConfig
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start up to --count routers: stops early when memory, processes or --max-time run out",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Name = labName
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			f, err := lab.FleetUp(cmd.Context(), cfg, exe)
			if err != nil {
				return err
			}
			return f.WriteSummary(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Count, "count", 100, "routers to start (fewer when the machine runs out first)")
	f.IntVar(&cfg.Peers, "peers", 3, "WireGuard peers per router")
	f.IntVar(&cfg.DeadPct, "dead", 0, "percent of the routers that drop every packet (ssh waits its connect timeout)")
	f.IntVar(&cfg.SlowPct, "slow", 0, "percent of the routers whose wg answers after --slow-by")
	f.DurationVar(&cfg.SlowBy, "slow-by", 5*time.Second, "how long a slow router's wg takes")
	f.DurationVar(&cfg.MaxTime, "max-time", 10*time.Minute, "stop starting routers after this long")
	f.IntVar(&cfg.MinFreeMiB, "min-free", 2048, "stop starting routers when less memory than this many MiB is available")
	return cmd
}

func labFleetDownCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Remove a fleet (as lab down does): namespaces, dropbears, the state server, files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lab.Down(cmd.Context(), labName); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "fleet %s: down\n", labName)
			return nil
		},
	}
}
