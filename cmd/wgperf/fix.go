package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

func fixCmd() *cobra.Command {
	var c verify.FixCommand
	// run runs one of fix's subcommands on --host.
	run := func(cmd *cobra.Command, sub func(fix.Command, context.Context, io.Writer) error) error {
		t, err := target.Parse(c.HostSpec)
		if err != nil {
			return couldNotRun(err)
		}
		fc := c.Command
		fc.Host.T, fc.Version, fc.Progress = t, version, progressLines()
		return sub(fc, cmd.Context(), cmd.OutOrStdout())
	}
	cmd := &cobra.Command{
		Use:   "fix",
		Short: "Plan (and with --apply, make) the changes that remedy diagnosed findings, with rollback",
		Long: `fix turns findings into changes: sysctls, WireGuard MTU, MSS clamping, NOTRACK,
BBR, stale endpoint routes, ICMP rate limits, RPS, bond hashing, tbf caps and
OpenWrt uci options. Each change is made now and persistently (sysctl.d, an nft
table of wgperf's own, wg-quick "MTU =", uci commit).

Without --apply it only prints the plan — what, why, the exact commands, the
files touched and how each step is undone — and changes nothing.
--print-script prints the plan as a POSIX shell script instead. No form of the
plan holds a key: the script writes a file with keys (a .netdev, a wg-quick
config) with its key lines taken from the live file.

--apply writes a journal on the target before each step, so
"wgperf fix rollback" restores the previous state exactly, even after a crash.
--apply --verify measures tunnel throughput to the far end (--server, found by
itself in a wgperf lab) before and after, and keeps the changes only if the
figure improved by more than 2%: otherwise everything is rolled back. MTU fixes
(wg-mtu, mss-clamp) also probe the path MTU and count a stalled transfer as
0 Mbit/s; other fixes use a quick bench (upload and download, one stream).

--html FILE (with --verify) writes the steps, the figures before and after, the
bench runs of both measurements and their charts as one self-contained HTML page.

--confirm 60s arms a watchdog on the target (plain shell, survives a dropped SSH
session) that rolls everything back unless "wgperf fix confirm" runs in time.
Before it runs the revert script it checks that only root can write the
journal directory and every directory above it, and that the script is the
one wgperf wrote (SHA-256). A confirm after the deadline is refused and rolls
back. A reboot ends the watchdog: on a host with the wgperf package, its boot
hook ("wgperf fix rollback --unconfirmed") rolls back every fix left
unconfirmed; elsewhere the next "wgperf fix confirm" or "fix rollback" does.

Findings come from collecting and checking the host now, or from --from FILE
(the output of "wgperf diagnose --json", or a "wgperf collect" snapshot).
wgperf connects only to the host --host names, never to one named inside the
file: for a file about another host, name it with --host; --apply with --from
always needs --host. A file asks only for what wgperf itself would propose:
each fix must be of a kind and within the values its finding's checks use
(wgperf explain ID), and is held to facts read from the host first (its own
WireGuard interfaces, its preferred gateway, a raise of a sysctl's current
value); anything else is refused in one line before anything is planned.`,
		Example: `  wgperf fix --host ssh:root@golem
  wgperf fix --host ssh:root@golem --only route.stale-endpoint --apply --confirm 60s
  wgperf fix confirm --host ssh:root@golem
  wgperf fix rollback --host ssh:root@golem
  wgperf fix --from golem.json --host ssh:root@golem --print-script > fix.sh
  wgperf fix --host netns:wgl-demo-a --apply --verify
  wgperf fix --host ssh:root@site-a --apply --verify --server ssh:root@site-b --time 5s
  wgperf fix --host netns:wgl-demo-a --apply --verify --html fix.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.HostGiven, c.Stdin, c.Version, c.Progress = cmd.Flags().Changed("host"), os.Stdin, version, progressLines()
			c.BenchProgress, c.LabPeer = progressTo(), labPeer
			return notKeptExit(verify.RunFix(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&c.HostSpec, "host", "local", target.FlagHelp("target"))
	fl.StringVar(&c.Host.Root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = fl.MarkHidden("root")
	fl.BoolVar(&c.JSON, "json", false, "print JSON instead of text")
	cmd.Flags().StringSliceVar(&c.Only, "only", nil, "fix only these finding IDs (comma separated)")
	cmd.Flags().StringVar(&c.From, "from", "", "read findings from a diagnose --json file or a collect snapshot (- for standard input)")
	cmd.Flags().BoolVar(&c.Apply, "apply", false, "make the changes (otherwise only print the plan)")
	cmd.Flags().DurationVar(&c.Confirm, "confirm", 0, "with --apply: roll back unless 'wgperf fix confirm' runs within this time (e.g. 60s)")
	cmd.Flags().BoolVar(&c.Script, "print-script", false, "print the plan as a POSIX shell script (rollback in comments)")
	cmd.Flags().BoolVar(&c.Measure, "verify", false, "with --apply: measure before and after, keep the changes only if throughput improved")
	cmd.Flags().StringVar(&c.Peer, "server", "", "with --verify: the far end of the tunnel, where iperf3 runs as the server (default in a wgperf lab: the other site)")
	cli.AliasFlag(cmd.Flags(), "peer", "server")
	cli.RunSecondsFlag(cmd.Flags(), &c.Seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().StringVar(&c.HTML, "html", "", "with --verify: also write a self-contained HTML report of the change and its measurements to this file")

	cmd.AddCommand(&cobra.Command{
		Use:   "confirm",
		Short: "Keep the changes of a fix applied with --confirm",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd, fix.Command.RunConfirm)
		},
	})
	var unconfirmed bool
	rollbackCmd := &cobra.Command{
		Use:   "rollback",
		Short: "Restore the state before the last applied fix (runtime and files)",
		Long: `rollback restores the state before the last applied fix: it runs the undo
lines of each step, newest first, and puts back the files as they were.

--unconfirmed rolls back every fix applied with --confirm that was never
confirmed, whatever the clock says. The packages run it at boot
(wgperf-fix-rollback.service, /etc/init.d/wgperf-fix-rollback): a reboot ends
the confirm watchdog, and a change nobody confirmed must not outlive its
deadline. With none, it does nothing.`,
		Example: `  wgperf fix rollback --host ssh:root@golem
  wgperf fix rollback --unconfirmed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if unconfirmed {
				return run(cmd, fix.Command.RunRollbackUnconfirmed)
			}
			return run(cmd, fix.Command.RunRollback)
		},
	}
	rollbackCmd.Flags().BoolVar(&unconfirmed, "unconfirmed", false, "roll back every fix applied with --confirm and never confirmed (run at boot)")
	cmd.AddCommand(rollbackCmd)
	cmd.AddCommand(ecmpCmd())
	return cmd
}

// notKeptExit is fix's exit for a verified change that was rolled back: a
// warning.
func notKeptExit(err error) error {
	if errors.Is(err, fix.ErrNotKept) {
		return &ExitError{Code: exitWarning}
	}
	return err
}

func ecmpCmd() *cobra.Command {
	var c verify.ECMPCommand
	cmd := &cobra.Command{
		Use:   "ecmp",
		Short: "Plan and apply N tunnels between the same two sites with a multipath route over them",
		Long: `ecmp spreads the flows of a site-to-site tunnel over N tunnels between the
same two ends, on consecutive ports, with a multipath route that hashes on
ports (ip route replace NET nexthop dev wg0 weight 1 nexthop dev wg1 ...), so
an 802.3ad bond hashing layer3+4 or two uplinks carry them apart. With
--server, over a bond that hashes ports, the ports are chosen so its hash
sends each tunnel by another slave (consecutive ones at both ends cancel in it).

With --server (the other end; in a wgperf lab, the other site by default) it
plans the change on both ends, as "wgperf fix" plans any other: the steps and
their undo, read from each host, nothing changed. Each end's new tunnels get
private keys derived on that host from its tunnel's own key: they never leave
it, and neither end's plan holds them. --apply makes the change the way doctor
--fix makes a fix of both ends: the far end's half first, then this end's, each
journaled on its host ("wgperf fix rollback" there undoes it), the far end's
rolled back when this end's fails or, with --verify, does not raise the
aggregate of parallel TCP streams (with its cost: retransmissions and
reordering). --confirm arms both ends' watchdogs. The change is runtime only.

Without --server it reads the wg-quick config of the tunnel and prints N configs
(Table = off), the multipath route, layer-4 multipath hashing and the bond hash
policy when a bond would pin every tunnel to one link, to install by hand on
both sites. Private keys are never printed.`,
		Example: `  wgperf fix ecmp --tunnels 2
  wgperf fix ecmp --host ssh:root@site-a --interface wg0 --tunnels 3 --network 192.168.20.0/24
  wgperf fix ecmp --host ssh:root@site-a --server ssh:root@site-b --tunnels 2
  wgperf fix ecmp --host ssh:root@site-a --server ssh:root@site-b --apply --verify --tunnel-addr 192.168.20.10 --confirm 60s
  wgperf fix ecmp --host netns:wgl-demo-a --tunnels 2 --apply --verify`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.InterfaceGiven, c.Version, c.Progress = cmd.Flags().Changed("interface"), version, progressLines()
			c.BenchProgress, c.Lab = progressTo(), labECMP
			return notKeptExit(verify.RunECMP(cmd.Context(), c, cmd.OutOrStdout()))
		},
	}
	cmd.Flags().StringVar(&c.HostSpec, "host", "local", target.FlagHelp("target"))
	cmd.Flags().StringVar(&c.ServerSpec, "server", "", "the other end of the tunnel: plan (and with --apply make) the change on both ends (default in a wgperf lab: the other site)")
	cmd.Flags().StringVar(&c.Host.Root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = cmd.Flags().MarkHidden("root")
	cmd.Flags().StringVar(&c.Interface, "interface", "wg0", "the existing tunnel to multiply (default wg0; in a wgperf lab, the site's)")
	cli.IntFlag(cmd.Flags(), &c.Tunnels, "tunnels", 2, 2, 16, "number of tunnels (2..16)")
	cmd.Flags().StringSliceVar(&c.Networks, "network", nil, "without --server: remote networks to spread (default: the peer's AllowedIPs outside the tunnel subnet)")
	cmd.Flags().BoolVar(&c.Apply, "apply", false, "make the change on both ends (needs --server, or a wgperf lab)")
	cmd.Flags().DurationVar(&c.Confirm, "confirm", 0, "with --apply: roll both ends back unless 'wgperf fix confirm' runs on each within this time (e.g. 60s)")
	cmd.Flags().BoolVar(&c.Measure, "verify", false, "with --apply: measure parallel-stream throughput before and after, keep the change only if it went up")
	cmd.Flags().StringVar(&c.Addr, "tunnel-addr", "", "with --verify: where the streams go, an address in a network the tunnels carry (default in a wgperf lab: site B's)")
	cli.RunSecondsFlag(cmd.Flags(), &c.Seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().IntVar(&c.Streams, "streams", 0, "with --verify: parallel TCP streams (default 8 per tunnel, so hashing leaves no tunnel idle)")
	cmd.Flags().BoolVar(&c.JSON, "json", false, "with --server: print the plans (and journals) as JSON")
	return cmd
}
