package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// fixFlags are shared by fix and its subcommands.
type fixFlags struct {
	host    string
	root    string // config root; tests point it at a temporary directory
	jsonOut bool
	only    []string
	from    string
	apply   bool
	confirm time.Duration
	script  bool
	verify  bool
	peer    string // --verify: the far end of the tunnel
	seconds int    // --verify: seconds per iperf3 run
	html    string // --verify: the HTML report's file
}

func fixCmd() *cobra.Command {
	var f fixFlags
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runFix(cmd, &f) },
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.host, "host", "local", target.FlagHelp("target"))
	fl.StringVar(&f.root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = fl.MarkHidden("root")
	fl.BoolVar(&f.jsonOut, "json", false, "print JSON instead of text")
	cmd.Flags().StringSliceVar(&f.only, "only", nil, "fix only these finding IDs (comma separated)")
	cmd.Flags().StringVar(&f.from, "from", "", "read findings from a diagnose --json file or a collect snapshot (- for standard input)")
	cmd.Flags().BoolVar(&f.apply, "apply", false, "make the changes (otherwise only print the plan)")
	cmd.Flags().DurationVar(&f.confirm, "confirm", 0, "with --apply: roll back unless 'wgperf fix confirm' runs within this time (e.g. 60s)")
	cmd.Flags().BoolVar(&f.script, "print-script", false, "print the plan as a POSIX shell script (rollback in comments)")
	cmd.Flags().BoolVar(&f.verify, "verify", false, "with --apply: measure before and after, keep the changes only if throughput improved")
	cmd.Flags().StringVar(&f.peer, "server", "", "with --verify: the far end of the tunnel, where iperf3 runs as the server (default in a wgperf lab: the other site)")
	cli.AliasFlag(cmd.Flags(), "peer", "server")
	cli.RunSecondsFlag(cmd.Flags(), &f.seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().StringVar(&f.html, "html", "", "with --verify: also write a self-contained HTML report of the change and its measurements to this file")

	cmd.AddCommand(&cobra.Command{
		Use:   "confirm",
		Short: "Keep the changes of a fix applied with --confirm",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, fix.Command.RunConfirm)
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
				return f.run(cmd, fix.Command.RunRollbackUnconfirmed)
			}
			return f.run(cmd, fix.Command.RunRollback)
		},
	}
	rollbackCmd.Flags().BoolVar(&unconfirmed, "unconfirmed", false, "roll back every fix applied with --confirm and never confirmed (run at boot)")
	cmd.AddCommand(rollbackCmd)
	cmd.AddCommand(ecmpCmd())
	return cmd
}

// run runs one of fix's subcommands on --host.
func (f *fixFlags) run(cmd *cobra.Command, sub func(fix.Command, context.Context, io.Writer) error) error {
	c := f.command()
	var err error
	if c.Host.T, err = target.Parse(f.host); err != nil {
		return couldNotRun(err)
	}
	return sub(c, cmd.Context(), cmd.OutOrStdout())
}

func runFix(cmd *cobra.Command, f *fixFlags) error {
	if f.confirm > 0 && !f.apply {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--confirm needs --apply")}
	}
	if f.verify && !f.apply {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--verify needs --apply (it measures before and after the change)")}
	}
	if f.html != "" && !f.verify {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--html needs --apply --verify (it reports the measurements before and after the change)")}
	}
	if f.script && f.apply {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--print-script prints the plan for applying by hand; it does not go with --apply")}
	}
	// A file names hosts, but wgperf connects to (and changes) only a host
	// named on the command line.
	if f.from != "" && f.apply && !cmd.Flags().Changed("host") {
		return couldNotRun(fmt.Errorf("--apply with --from needs --host: wgperf changes only a host named on the command line, never one named inside %s", f.from))
	}
	c := f.command()
	var err error
	if f.from != "" {
		if c.FromFindings, err = fix.ReadFrom(f.from, os.Stdin); err != nil {
			return couldNotRun(err)
		}
	}
	if c.Host.T, err = target.Parse(f.host); err != nil {
		return couldNotRun(err)
	}
	rec := &verify.Record{}
	if f.verify {
		// Before any work: without a far end there is nothing to measure against.
		vc := verify.Config{Host: c.Host.T, Seconds: f.seconds, Record: rec}
		if vc.Peer, err = verifyPeer(c.Host.T, f.peer); err != nil {
			return couldNotRun(err)
		}
		if w := progressTo(); w != nil {
			vc.Progress = w
		}
		c.Verify = vc.Fix(c.Progress)
	}
	res, err := fix.RunCommand(cmd.Context(), c, cmd.OutOrStdout())
	if errors.Is(err, fix.ErrNotKept) {
		err = &ExitError{Code: exitWarning}
	}
	if res != nil && res.Journal != nil && f.html != "" {
		// Also when the change was rolled back or failed: the page says what was tried and measured.
		j := res.Journal
		herr := report.WriteFile(f.html, report.FromFix(j, j.Fixed(res.Findings), rec.Benches, rec.MTU))
		if herr != nil && err == nil {
			return herr
		}
		if herr != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "wgperf:", herr)
		}
	}
	return err
}

// command is the fix.Command the flags ask for (its host not yet parsed).
func (f *fixFlags) command() fix.Command {
	return fix.Command{Host: fix.Host{Root: f.root}, From: f.from, Only: f.only, Apply: f.apply, Confirm: f.confirm, Script: f.script,
		JSON: f.jsonOut, Version: version, Progress: progressLines()}
}

// verifyPeer is where --verify measures to: --server when given, else, for a
// node of a wgperf lab, the node at the other end of its tunnel.
func verifyPeer(host target.Target, spec string) (target.Target, error) {
	if spec != "" {
		return target.Parse(spec)
	}
	if peer, ok := labPeer(host); ok {
		return peer, nil
	}
	return nil, fmt.Errorf("--verify needs --server: the far end of the tunnel on %s, where iperf3 runs as the server (e.g. --server ssh:root@site-b)", host)
}

func ecmpCmd() *cobra.Command {
	var (
		host, root, iface, server, addr string
		tunnels, seconds, streams       int
		networks                        []string
		apply, measure, asJSON          bool
		confirm                         time.Duration
	)
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
			if measure && !apply {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--verify needs --apply (it measures before and after building the tunnels)")}
			}
			if confirm > 0 && !apply {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--confirm needs --apply")}
			}
			t, err := target.Parse(host)
			if err != nil {
				return couldNotRun(err)
			}
			lab := labECMP(t)
			// The other end: --server parsed once, or the lab's own node.
			far := lab.Peer
			if server != "" {
				if far, err = target.Parse(server); err != nil {
					return couldNotRun(fmt.Errorf("--server: %w", err))
				}
			}
			if !cmd.Flags().Changed("interface") && lab.Interface != "" && far != nil {
				iface = lab.Interface
			}
			if addr == "" {
				addr = lab.Addr
			}
			if measure && far != nil && addr == "" {
				return couldNotRun(fmt.Errorf("--verify needs --tunnel-addr: an address in a network the tunnels carry, where the server answers (the streams must take the multipath route)"))
			}
			if streams == 0 {
				streams = min(8*tunnels, 128)
			}
			c := fix.ECMPCommand{Host: fix.Host{T: t, Root: root, WGUserspace: lab.Userspace}, Server: far, Interface: iface, Tunnels: tunnels,
				Networks: networks, Apply: apply, Confirm: confirm, JSON: asJSON, Version: version, Progress: progressLines()}
			if measure {
				c.Verify = func(near, far target.Target) fix.Measure {
					p := verify.Parallel{Client: near, Server: far, Addr: addr, Streams: streams, Seconds: seconds}
					return verify.NewParallel(p, progressTo())
				}
			}
			err = fix.RunECMPCommand(cmd.Context(), c, cmd.OutOrStdout())
			if errors.Is(err, fix.ErrNotKept) {
				return &ExitError{Code: exitWarning}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&host, "host", "local", target.FlagHelp("target"))
	cmd.Flags().StringVar(&server, "server", "", "the other end of the tunnel: plan (and with --apply make) the change on both ends (default in a wgperf lab: the other site)")
	cmd.Flags().StringVar(&root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = cmd.Flags().MarkHidden("root")
	cmd.Flags().StringVar(&iface, "interface", "wg0", "the existing tunnel to multiply (default wg0; in a wgperf lab, the site's)")
	cli.IntFlag(cmd.Flags(), &tunnels, "tunnels", 2, 2, 16, "number of tunnels (2..16)")
	cmd.Flags().StringSliceVar(&networks, "network", nil, "without --server: remote networks to spread (default: the peer's AllowedIPs outside the tunnel subnet)")
	cmd.Flags().BoolVar(&apply, "apply", false, "make the change on both ends (needs --server, or a wgperf lab)")
	cmd.Flags().DurationVar(&confirm, "confirm", 0, "with --apply: roll both ends back unless 'wgperf fix confirm' runs on each within this time (e.g. 60s)")
	cmd.Flags().BoolVar(&measure, "verify", false, "with --apply: measure parallel-stream throughput before and after, keep the change only if it went up")
	cmd.Flags().StringVar(&addr, "tunnel-addr", "", "with --verify: where the streams go, an address in a network the tunnels carry (default in a wgperf lab: site B's)")
	cli.RunSecondsFlag(cmd.Flags(), &seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().IntVar(&streams, "streams", 0, "with --verify: parallel TCP streams (default 8 per tunnel, so hashing leaves no tunnel idle)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --server: print the plans (and journals) as JSON")
	return cmd
}
