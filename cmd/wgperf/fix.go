package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
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
	aliasFlag(cmd.Flags(), "peer", "server")
	runSecondsFlag(cmd.Flags(), &f.seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().StringVar(&f.html, "html", "", "with --verify: also write a self-contained HTML report of the change and its measurements to this file")

	cmd.AddCommand(&cobra.Command{
		Use:   "confirm",
		Short: "Keep the changes of a fix applied with --confirm",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, env, stop, err := fixEnv(&f)
			if err != nil {
				return err
			}
			defer stop()
			j, err := fix.Confirm(ctx, env)
			if err != nil {
				return couldNotRun(err)
			}
			return printJournal(cmd.OutOrStdout(), &f, j, fmt.Sprintf("Confirmed fix %s on %s: the changes stay.", j.ID, j.Host))
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
				return rollbackUnconfirmed(cmd, &f)
			}
			ctx, env, stop, err := fixEnv(&f)
			if err != nil {
				return err
			}
			defer stop()
			j, err := fix.Rollback(ctx, env)
			if j == nil {
				return couldNotRun(err)
			}
			msg := fmt.Sprintf("Rolled back fix %s on %s.", j.ID, j.Host)
			if perr := printJournal(cmd.OutOrStdout(), &f, j, msg); perr != nil {
				return perr
			}
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("rollback incomplete: %v", err)}
			}
			return nil
		},
	}
	rollbackCmd.Flags().BoolVar(&unconfirmed, "unconfirmed", false, "roll back every fix applied with --confirm and never confirmed (run at boot)")
	cmd.AddCommand(rollbackCmd)
	cmd.AddCommand(ecmpCmd())
	return cmd
}

// rollbackUnconfirmed is "fix rollback --unconfirmed", the boot hook: one
// report per fix it rolled back, nothing when there was none.
func rollbackUnconfirmed(cmd *cobra.Command, f *fixFlags) error {
	if f.jsonOut {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--unconfirmed prints text only (run at boot, its lines go to the system log)")}
	}
	ctx, env, stop, err := fixEnv(f)
	if err != nil {
		return err
	}
	defer stop()
	js, err := fix.RollbackUnconfirmed(ctx, env)
	for _, j := range js {
		msg := fmt.Sprintf("Rolled back fix %s on %s: it was applied with --confirm and never confirmed.", j.ID, j.Host)
		if perr := printJournal(cmd.OutOrStdout(), f, j, msg); perr != nil {
			return perr
		}
	}
	if err != nil {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("rollback incomplete: %v", err)}
	}
	return nil
}

// fixEnv parses the target and detects its platform.
func fixEnv(f *fixFlags) (context.Context, *fix.Env, func(), error) {
	t, err := target.Parse(f.host)
	if err != nil {
		return nil, nil, nil, couldNotRun(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env, err := fix.Detect(ctx, t, f.root)
	if err != nil {
		stop()
		return nil, nil, nil, couldNotRun(err)
	}
	return ctx, env, stop, nil
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
	var fromFile []finding.Finding
	if f.from != "" {
		var err error
		if fromFile, err = readFixFrom(f.from); err != nil {
			return couldNotRun(err)
		}
	}
	ctx, env, stop, err := fixEnv(f)
	if err != nil {
		return err
	}
	defer stop()
	var peer target.Target
	if f.verify {
		// Before any work: without a far end there is nothing to measure against.
		if peer, err = verifyPeer(env.T, f.peer); err != nil {
			return couldNotRun(err)
		}
	}
	progress := progressLines()
	var findings []finding.Finding
	if f.from != "" {
		if findings, err = fix.ForHost(fromFile, env.T.String()); err != nil {
			return couldNotRun(fmt.Errorf("--from %s: %v", f.from, err))
		}
	} else {
		progress("collecting facts from " + env.T.String())
		var snap *facts.Snapshot
		if snap, findings, err = diagnose.Target(ctx, env.T); err != nil {
			return couldNotRun(err)
		}
		// A host without WireGuard has no tunnel to measure a fix by, and
		// nothing found is not "every fix in place" (diagnose's UNKNOWN).
		if f.verify || !atLeastWarning(findings) {
			if err := diagnose.RequireWireGuard([]*facts.Snapshot{snap}); err != nil {
				return couldNotRun(err)
			}
		}
	}
	progress("reading the current state of " + env.T.String())
	rec := &verify.Record{}
	req := fix.Request{Env: env, Findings: findings, Only: onlyIDs(f.only), Apply: f.apply, Confirm: f.confirm, FromFile: f.from != "", Progress: progress}
	if f.verify {
		req.Verify = func(ctx context.Context, p *fix.Plan) (fix.Measure, error) {
			vc := verify.Config{Host: env.T, Peer: peer, Seconds: f.seconds, Record: rec}
			if w := progressTo(); w != nil {
				vc.Progress = w
			}
			progress("finding the tunnel between " + env.T.String() + " and " + peer.String())
			m, err := verify.New(ctx, p, vc)
			if err != nil {
				return nil, fmt.Errorf("--verify: %w", err)
			}
			return m, nil
		}
	}
	res, err := fix.Run(ctx, req)
	var missing *fix.NoSuchFindingError
	switch {
	case errors.As(err, &missing):
		return couldNotRun(fmt.Errorf("--only %w", err))
	case res == nil:
		return couldNotRun(err)
	}
	out, plan, j := cmd.OutOrStdout(), res.Plan, res.Journal
	switch {
	case f.script:
		return plan.WriteScript(out)
	case !f.apply:
		if f.jsonOut {
			return writeJSON(out, document.FixPlan, plan)
		}
		if err := plan.WriteText(out); err != nil {
			return err
		}
		if plan.Pending() > 0 {
			_, err = fmt.Fprintf(out, "\nNothing was changed. To apply: wgperf fix --host %s%s --apply [--confirm 60s]\n", env.T, onlyFlag(f.only))
		}
		return err
	case plan.Pending() == 0:
		if f.jsonOut {
			return writeJSON(out, document.FixPlan, plan)
		}
		_, err := fmt.Fprintf(out, "Nothing to change on %s: every fix is already in place.\n", env.T)
		return err
	}
	result := reportApply(out, f, env.T, j, err)
	if err == nil && j.State == fix.StateConfirming && !f.jsonOut {
		if fix.HasBootHook(ctx, env) {
			fmt.Fprintf(out, "Should %s reboot before then, its boot hook (wgperf-fix-rollback) rolls every change back.\n", env.T)
		} else {
			fmt.Fprintf(out, "%s has no wgperf boot hook: should it reboot before then, the changes stay until the next wgperf fix confirm or fix rollback there rolls them back (the wgperf package installs the hook).\n", env.T)
		}
	}
	if j != nil && f.html != "" {
		// Also when the change was rolled back or failed: the page says what was tried and measured.
		herr := writeHTMLReport(f.html, report.FromFix(j, j.Fixed(findings), rec.Benches, rec.MTU))
		if herr != nil && result == nil {
			return herr
		}
		if herr != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "wgperf:", herr)
		}
	}
	return result
}

func atLeastWarning(fs []finding.Finding) bool {
	worst, any := finding.Worst(fs)
	return any && worst >= finding.Warning
}

// readFixFrom reads --from FILE once: the findings of a "wgperf diagnose
// --json" or "doctor --json" report, or those the checks find on a "wgperf
// collect" snapshot. The hosts it names are never contacted.
func readFixFrom(path string) ([]finding.Finding, error) {
	var file io.ReadCloser = io.NopCloser(os.Stdin) // "-"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %v", err)
		}
		file = f
	}
	defer file.Close()
	doc, err := document.Read(file, "--from "+path)
	if err != nil {
		return nil, err
	}
	if doc.Kind == document.Snapshot {
		snap, err := document.DecodeSnapshot(doc.Data)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", path, err)
		}
		return diagnose.Findings(snap), nil
	}
	fs, err := fix.ReadFindings(bytes.NewReader(doc.Data))
	if err != nil {
		return nil, fmt.Errorf("--from %s: %v", path, err)
	}
	return fs, nil
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

// reportApply prints what an apply did and returns its outcome: an error
// when it failed, exit 1 when --verify rolled it back.
func reportApply(out io.Writer, f *fixFlags, t target.Target, j *fix.Journal, err error) error {
	if err != nil {
		if j != nil {
			_ = printJournal(out, f, j, "")
		}
		return couldNotRun(err)
	}
	if j.Verify != nil && !j.Verify.Kept {
		msg := fmt.Sprintf("Fix %s did not improve %s on %s: every change was rolled back.", j.ID, j.Verify.Before.Name, j.Host)
		if err := printJournal(out, f, j, msg); err != nil {
			return err
		}
		return &ExitError{Code: exitWarning}
	}
	msg := fmt.Sprintf("Applied fix %s on %s. Undo with: wgperf fix rollback --host %s", j.ID, j.Host, t)
	if f.confirm > 0 {
		msg = fmt.Sprintf("Applied fix %s on %s. Run within %s:\n  wgperf fix confirm --host %s\nor every change is rolled back on the host by itself.",
			j.ID, j.Host, f.confirm, t)
	}
	return printJournal(out, f, j, msg)
}

// onlyIDs are the finding IDs --only names.
func onlyIDs(only []string) []finding.ID {
	var out []finding.ID
	for _, id := range only {
		out = append(out, finding.ID(id))
	}
	return out
}

func onlyFlag(only []string) string {
	if len(only) == 0 {
		return ""
	}
	return " --only " + strings.Join(only, ",")
}

// printJournal reports what an apply, confirm or rollback did, then msg.
func printJournal(w io.Writer, f *fixFlags, j *fix.Journal, msg string) error {
	if f.jsonOut {
		return writeJSON(w, document.FixJournal, j)
	}
	if err := j.WriteText(w); err != nil || msg == "" {
		return err
	}
	_, err := fmt.Fprintln(w, msg)
	return err
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
			f := &fixFlags{host: host, root: root}
			ctx, env, stop, err := fixEnv(f)
			if err != nil {
				return err
			}
			defer stop()
			lab := labECMP(env.T)
			if server == "" && lab.peer != nil {
				server = lab.peer.String()
			}
			if server == "" {
				if apply {
					return couldNotRun(fmt.Errorf("--apply needs --server: both ends of the tunnel get new tunnels (e.g. --server ssh:root@site-b)"))
				}
				in, err := fix.ReadECMPInput(ctx, env, iface)
				if err != nil {
					return couldNotRun(err)
				}
				in.Tunnels, in.Networks = tunnels, networks
				plan, err := fix.PlanECMP(in)
				if err != nil {
					return couldNotRun(err)
				}
				return plan.Write(cmd.OutOrStdout())
			}
			if !cmd.Flags().Changed("interface") && lab.iface != "" {
				iface = lab.iface
			}
			if addr == "" {
				addr = lab.addr
			}
			if measure && addr == "" {
				return couldNotRun(fmt.Errorf("--verify needs --tunnel-addr: an address in a network the tunnels carry, where the server answers (the streams must take the multipath route)"))
			}
			farT, err := target.Parse(server)
			if err != nil {
				return couldNotRun(fmt.Errorf("--server: %w", err))
			}
			far, err := fix.Detect(ctx, farT, root)
			if err != nil {
				return couldNotRun(err)
			}
			env.WGUserspace, far.WGUserspace = lab.userspace, lab.userspace
			if streams == 0 {
				streams = min(8*tunnels, 128)
			}
			pair := fix.ECMPPair{Near: env, Far: far, Interface: iface, Tunnels: tunnels, Apply: apply, Confirm: confirm, Progress: progressLines()}
			if measure {
				p := verify.Parallel{Client: env.T, Server: far.T, Addr: addr, Streams: streams, Seconds: seconds}
				pair.Verify = func(context.Context, *fix.Plan) (fix.Measure, error) { return verify.NewParallel(p, progressTo()), nil }
			}
			out, err := fix.RunECMP(ctx, pair)
			if out == nil {
				return couldNotRun(err)
			}
			if perr := writeResult(cmd.OutOrStdout(), document.FixECMP, out.ECMPResult(), asJSON); perr != nil {
				return perr
			}
			switch {
			case err != nil:
				return couldNotRun(err)
			case !apply && !asJSON:
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "Nothing was changed. To apply: wgperf fix ecmp --host %s --server %s --tunnels %d --apply [--verify] [--confirm 60s]\n", env.T, far.T, tunnels)
				return err
			case apply && !out.Kept():
				return &ExitError{Code: exitWarning}
			case apply && !asJSON:
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "Undo with: wgperf fix rollback --host %s, then wgperf fix rollback --host %s\n", env.T, far.T)
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "local", target.FlagHelp("target"))
	cmd.Flags().StringVar(&server, "server", "", "the other end of the tunnel: plan (and with --apply make) the change on both ends (default in a wgperf lab: the other site)")
	cmd.Flags().StringVar(&root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = cmd.Flags().MarkHidden("root")
	cmd.Flags().StringVar(&iface, "interface", "wg0", "the existing tunnel to multiply (default wg0; in a wgperf lab, the site's)")
	intFlag(cmd.Flags(), &tunnels, "tunnels", 2, 2, 16, "number of tunnels (2..16)")
	cmd.Flags().StringSliceVar(&networks, "network", nil, "without --server: remote networks to spread (default: the peer's AllowedIPs outside the tunnel subnet)")
	cmd.Flags().BoolVar(&apply, "apply", false, "make the change on both ends (needs --server, or a wgperf lab)")
	cmd.Flags().DurationVar(&confirm, "confirm", 0, "with --apply: roll both ends back unless 'wgperf fix confirm' runs on each within this time (e.g. 60s)")
	cmd.Flags().BoolVar(&measure, "verify", false, "with --apply: measure parallel-stream throughput before and after, keep the change only if it went up")
	cmd.Flags().StringVar(&addr, "tunnel-addr", "", "with --verify: where the streams go, an address in a network the tunnels carry (default in a wgperf lab: site B's)")
	runSecondsFlag(cmd.Flags(), &seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().IntVar(&streams, "streams", 0, "with --verify: parallel TCP streams (default 8 per tunnel, so hashing leaves no tunnel idle)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --server: print the plans (and journals) as JSON")
	return cmd
}
