package lab

import (
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// Processes are the hidden "wgperf lab _NAME" commands the lab starts as
// processes of its own (re-executing wgperf): each parses the flags the lab
// writes on its command line (nodeproc.go, path.go, knee.go, pings.go,
// fleet.go) and runs it.
func Processes() []*cobra.Command {
	return []*cobra.Command{nodeCmd(), delayCmd(), kneeCmd(), pingsCmd(), flowsCmd(), fleetWGCmd()}
}

// nodeCmd is the embedded WireGuard process the lab starts in each namespace.
func nodeCmd() *cobra.Command {
	var opts NodeOptions
	cmd := &cobra.Command{
		Use:    "_node",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The node outlives "lab up"; it stops on SIGTERM from "lab down".
			signal.Ignore(syscall.SIGHUP)
			return RunNode(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Interface, "interface", "", "interface name")
	cmd.Flags().IntVar(&opts.MTU, "mtu", 1420, "interface MTU")
	cmd.Flags().IntVar(&opts.UDPBuffer, "udp-buffer", 0, "UDP socket buffer size")
	cmd.Flags().IntVar(&opts.UDPBufferPercent, "udp-buffer-percent", 0, "share of what rmem_max allows a capped buffer gets")
	return cmd
}

// delayCmd is the lab router's userspace delay element (no netem here).
func delayCmd() *cobra.Command {
	var iface string
	var delay time.Duration
	cmd := &cobra.Command{
		Use:    "_delay",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			signal.Ignore(syscall.SIGHUP)
			return RunDelay(iface, delay)
		},
	}
	cmd.Flags().StringVar(&iface, "interface", "dly0", "TUN device name")
	cmd.Flags().DurationVar(&delay, "delay", 10*time.Millisecond, "one-way delay")
	return cmd
}

// kneeCmd is the lab router's knee: a receiver that collapses under load.
func kneeCmd() *cobra.Command {
	var iface string
	var mbit int
	var hold time.Duration
	cmd := &cobra.Command{
		Use:    "_knee",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			signal.Ignore(syscall.SIGHUP)
			return RunKnee(iface, mbit, hold)
		},
	}
	cmd.Flags().StringVar(&iface, "interface", "knee0", "TUN device name")
	cmd.Flags().IntVar(&mbit, "mbit", 0, "the knee's rate in Mbit/s")
	cmd.Flags().DurationVar(&hold, "hold", 4*time.Second, "how long it stays collapsed")
	return cmd
}

// pingsCmd is the lab's monitoring agent: bursts of pings from one raw socket.
func pingsCmd() *cobra.Command {
	var to string
	var burst int
	var every time.Duration
	cmd := &cobra.Command{
		Use:    "_pings",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			signal.Ignore(syscall.SIGHUP)
			return RunPings(to, burst, every)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "address to ping")
	cmd.Flags().IntVar(&burst, "burst", 6, "echo requests back to back each period")
	cmd.Flags().DurationVar(&every, "every", time.Second, "period")
	return cmd
}

// flowsCmd opens many short UDP flows, to fill connection-tracking tables.
func flowsCmd() *cobra.Command {
	var to string
	var count int
	cmd := &cobra.Command{
		Use:    "_flows",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return SendFlows(to, count)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "destination address")
	cmd.Flags().IntVar(&count, "count", 500, "number of flows")
	return cmd
}

// fleetWGCmd is the process that serves every fleet router's WireGuard state.
func fleetWGCmd() *cobra.Command {
	var opts FleetWGOptions
	cmd := &cobra.Command{
		Use:    "_fleetwg",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			signal.Ignore(syscall.SIGHUP)
			return RunFleetWG(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "the fleet's folder")
	cmd.Flags().IntVar(&opts.Count, "count", 0, "routers")
	cmd.Flags().IntVar(&opts.Peers, "peers", 3, "peers per router")
	cmd.Flags().IntSliceVar(&opts.Slow, "slow", nil, "slow routers")
	cmd.Flags().DurationVar(&opts.Delay, "slow-by", 5*time.Second, "a slow router's delay")
	return cmd
}
