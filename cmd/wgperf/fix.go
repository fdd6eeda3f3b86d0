package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
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
--print-script prints the plan as a POSIX shell script instead.

--apply writes a journal on the target before each step, so
"wgperf fix rollback" restores the previous state exactly, even after a crash.
--apply --verify measures tunnel throughput to the far end (--peer, found by
itself in a wgperf lab) before and after, and keeps the changes only if the
figure improved by more than 2%: otherwise everything is rolled back. MTU fixes
(wg-mtu, mss-clamp) also probe the path MTU and count a stalled transfer as
0 Mbit/s; other fixes use a quick bench (upload and download, one stream).

--confirm 60s arms a watchdog on the target (plain shell, survives a dropped SSH
session) that rolls everything back unless "wgperf fix confirm" runs in time.

Findings come from collecting and checking the host now, or from --from FILE
(the output of "wgperf diagnose --json", or a "wgperf collect" snapshot).`,
		Example: `  wgperf fix --host ssh:root@golem
  wgperf fix --host ssh:root@golem --only route.stale-endpoint --apply --confirm 60s
  wgperf fix confirm --host ssh:root@golem
  wgperf fix rollback --host ssh:root@golem
  wgperf fix --from diagnose.json --print-script > fix.sh
  wgperf fix --host netns:wgl-demo-a --apply --verify
  wgperf fix --host ssh:root@site-a --apply --verify --peer ssh:root@site-b --time 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFix(cmd, &f) },
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.host, "host", "local", "target: local, netns:NAME or ssh:[user@]host[:port]")
	fl.StringVar(&f.root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = fl.MarkHidden("root")
	fl.BoolVar(&f.jsonOut, "json", false, "print JSON instead of text")
	cmd.Flags().StringSliceVar(&f.only, "only", nil, "fix only these finding IDs (comma separated)")
	cmd.Flags().StringVar(&f.from, "from", "", "read findings from a diagnose --json file or a collect snapshot")
	cmd.Flags().BoolVar(&f.apply, "apply", false, "make the changes (otherwise only print the plan)")
	cmd.Flags().DurationVar(&f.confirm, "confirm", 0, "with --apply: roll back unless 'wgperf fix confirm' runs within this time (e.g. 60s)")
	cmd.Flags().BoolVar(&f.script, "print-script", false, "print the plan as a POSIX shell script (rollback in comments)")
	cmd.Flags().BoolVar(&f.verify, "verify", false, "with --apply: measure before and after, keep the changes only if throughput improved")
	cmd.Flags().StringVar(&f.peer, "peer", "", "with --verify: the far end of the tunnel, where iperf3 runs (default in a wgperf lab: the other site)")
	cmd.Flags().IntVar(&f.seconds, "time", 3, "with --verify: seconds per iperf3 run")

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
	cmd.AddCommand(&cobra.Command{
		Use:   "rollback",
		Short: "Restore the state before the last applied fix (runtime and files)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	})
	cmd.AddCommand(ecmpCmd())
	return cmd
}

// fixEnv parses the target and detects its platform.
func fixEnv(f *fixFlags) (context.Context, *fix.Env, func(), error) {
	t, err := target.Parse(f.host)
	if err != nil {
		return nil, nil, nil, couldNotRun(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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
	if f.seconds < 1 || f.seconds > 60 {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--time %d: want 1..60 seconds", f.seconds)}
	}
	if f.script && f.apply {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--print-script prints the plan for applying by hand; it does not go with --apply")}
	}
	if f.from != "" && !cmd.Flags().Changed("host") {
		// A file from another host: plan for that host unless told otherwise.
		if h, err := hostOfFile(f.from); err == nil && h != "" {
			f.host = h
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
	progress := progressFunc(f)
	findings, err := fixFindings(ctx, env.T, f, progress)
	if err != nil {
		return couldNotRun(err)
	}
	items, manual, err := fix.Select(findings, f.only)
	if err != nil {
		return couldNotRun(err)
	}
	progress("reading the current state of " + env.T.String())
	plan, err := fix.MakePlan(ctx, env, items, manual)
	if err != nil {
		return couldNotRun(err)
	}
	out := cmd.OutOrStdout()
	switch {
	case f.script:
		return plan.WriteScript(out)
	case !f.apply:
		if f.jsonOut {
			return writeJSON(out, plan)
		}
		if err := plan.WriteText(out); err != nil {
			return err
		}
		if plan.Pending() > 0 {
			_, err = fmt.Fprintf(out, "\nNothing was changed. To apply: wgperf fix --host %s%s --apply [--confirm 60s]\n", env.T, onlyFlag(f.only))
		}
		return err
	}
	if plan.Pending() == 0 {
		if f.jsonOut {
			return writeJSON(out, plan)
		}
		_, err := fmt.Fprintf(out, "Nothing to change on %s: every fix is already in place.\n", env.T)
		return err
	}
	opts := fix.ApplyOptions{Confirm: f.confirm, Progress: progress}
	if f.verify {
		vc := fix.VerifyConfig{Host: env.T, Peer: peer, Seconds: f.seconds}
		if w := progressTo(f.jsonOut); w != nil {
			vc.Progress = w
		}
		progress("finding the tunnel between " + env.T.String() + " and " + peer.String())
		if opts.Verify, err = fix.NewMeasure(ctx, plan, vc); err != nil {
			return couldNotRun(err)
		}
	}
	j, err := fix.Apply(ctx, env, plan, opts)
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
	msg := fmt.Sprintf("Applied fix %s on %s. Undo with: wgperf fix rollback --host %s", j.ID, j.Host, env.T)
	if f.confirm > 0 {
		msg = fmt.Sprintf("Applied fix %s on %s. Run within %s:\n  wgperf fix confirm --host %s\nor every change is rolled back on the host by itself.",
			j.ID, j.Host, f.confirm, env.T)
	}
	return printJournal(out, f, j, msg)
}

// verifyPeer is --peer or, when the host is a node of a wgperf lab, the node
// at the other end of its tunnel.
func verifyPeer(host target.Target, spec string) (target.Target, error) {
	if spec != "" {
		return target.Parse(spec)
	}
	if name, node, ok := labNode(host.String()); ok {
		if l, err := lab.Load(name); err == nil {
			other := map[string]string{"a": "b", "b": "a"}[node]
			if l.Node(other) != nil {
				return l.Target(other), nil
			}
		}
	}
	return nil, fmt.Errorf("--verify needs --peer: the far end of the tunnel on %s, where iperf3 runs as the server (e.g. --peer ssh:root@site-b)", host)
}

// labNode splits "netns:wgl-NAME-NODE" into the lab name and node.
func labNode(spec string) (name, node string, ok bool) {
	rest, ok := strings.CutPrefix(spec, "netns:"+lab.Prefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

func onlyFlag(only []string) string {
	if len(only) == 0 {
		return ""
	}
	return " --only " + strings.Join(only, ",")
}

// fixFindings collects and checks the host, or reads --from.
func fixFindings(ctx context.Context, t target.Target, f *fixFlags, progress func(string)) ([]finding.Finding, error) {
	if f.from == "" {
		progress("collecting facts from " + t.String())
		snap, err := collect.Collect(ctx, t, collect.Options{})
		if err != nil {
			return nil, err
		}
		return check.Run([]*facts.Snapshot{snap}, check.Options{}).Findings, nil
	}
	file, err := os.Open(f.from)
	if err != nil {
		return nil, fmt.Errorf("--from: %v", err)
	}
	defer file.Close()
	if isSnapshot(f.from) {
		snap, err := collect.ReadSnapshot(file)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", f.from, err)
		}
		return check.Run([]*facts.Snapshot{snap}, check.Options{}).Findings, nil
	}
	all, err := fix.ReadFindings(file)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %v", f.from, err)
	}
	// Keep the findings about this host (and those that name none).
	var fs []finding.Finding
	for _, x := range all {
		if x.Host == "" || x.Host == t.String() {
			fs = append(fs, x)
		}
	}
	if len(all) > 0 && len(fs) == 0 {
		return nil, fmt.Errorf("--from %s: no findings for host %s (the file is about %s)", f.from, t, all[0].Host)
	}
	return fs, nil
}

// isSnapshot tells a collect snapshot (it has schema_version) from a findings file.
func isSnapshot(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var probe struct {
		SchemaVersion int `json:"schema_version"`
	}
	return json.Unmarshal(b, &probe) == nil && probe.SchemaVersion > 0
}

// hostOfFile returns the single host a findings file or snapshot is about.
func hostOfFile(path string) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	if isSnapshot(path) {
		snap, err := collect.ReadSnapshot(file)
		if err != nil {
			return "", err
		}
		return snap.Host, nil
	}
	fs, err := fix.ReadFindings(file)
	if err != nil {
		return "", err
	}
	host := ""
	for _, x := range fs {
		if x.Host != "" && host != "" && x.Host != host {
			return "", nil // several hosts: --host must choose
		}
		if x.Host != "" {
			host = x.Host
		}
	}
	return host, nil
}

// progressFunc prints progress lines on stderr when it is a terminal and the
// output is not JSON.
func progressFunc(f *fixFlags) func(string) {
	return progressLines(f.jsonOut)
}

// printJournal reports what an apply, confirm or rollback did, step by step.
func printJournal(w io.Writer, f *fixFlags, j *fix.Journal, msg string) error {
	if f.jsonOut {
		return writeJSON(w, j)
	}
	for i, e := range j.Entries {
		line := fmt.Sprintf("%2d. %-8s [%s] %s", i+1, e.Status, strings.Join(e.Findings, ", "), e.Description)
		if e.Error != "" {
			line += ": " + e.Error
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	if j.Verify != nil {
		if err := j.Verify.WriteText(w); err != nil {
			return err
		}
	}
	if msg != "" {
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	return nil
}

func ecmpCmd() *cobra.Command {
	var (
		host, root, iface         string
		tunnels, seconds, streams int
		networks                  []string
		apply, verify, asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "ecmp",
		Short: "Print a plan for N tunnels between the same two sites with a multipath route over them",
		Long: `ecmp reads the wg-quick config of an existing site-to-site tunnel and prints N
configs on consecutive ports with Table = off, the multipath route that spreads
flows over them (ip route replace NET nexthop dev wg0 weight 1 nexthop dev wg1 ...),
layer-4 multipath hashing, and the bond hash policy when a bond would pin every
tunnel to one link. It only prints; nothing is changed. Private keys are never printed.

--apply builds the tunnels only in a wgperf lab (--host netns:wgl-NAME-a): real
hosts need new configs and keys on both ends, so there wgperf prints them for
you to install on both sites. --verify measures the aggregate throughput of
parallel TCP streams to site B's network before and after, and the scaling.`,
		Example: `  wgperf fix ecmp --tunnels 2
  wgperf fix ecmp --host ssh:root@site-a --interface wg0 --tunnels 3 --network 192.168.20.0/24
  wgperf fix ecmp --host netns:wgl-demo-a --tunnels 2 --apply --verify`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if verify && !apply {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--verify needs --apply (it measures before and after building the tunnels)")}
			}
			if apply {
				return applyLabECMP(cmd.OutOrStdout(), host, ecmpOptions{tunnels: tunnels, verify: verify, seconds: seconds, streams: streams, json: asJSON})
			}
			f := &fixFlags{host: host, root: root}
			ctx, env, stop, err := fixEnv(f)
			if err != nil {
				return err
			}
			defer stop()
			path := env.Path("/etc/wireguard/" + iface + ".conf")
			data, err := env.T.ReadFile(ctx, path)
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: read %s: %v (ecmp starts from a wg-quick config)", env.T, path, err)}
			}
			conf, err := fix.ParseWGQuick(strings.NewReader(string(data)))
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: %v", path, err)}
			}
			bonds := map[string]string{}
			if out, err := env.T.Run(ctx, "sh", "-c", "grep -H . /sys/class/net/*/bonding/xmit_hash_policy 2>/dev/null || true"); err == nil {
				for _, l := range strings.Split(string(out), "\n") {
					// /sys/class/net/bond0/bonding/xmit_hash_policy:layer2 0
					p, v, ok := strings.Cut(l, ":")
					if parts := strings.Split(p, "/"); ok && len(parts) > 4 && len(strings.Fields(v)) > 0 {
						bonds[parts[4]] = strings.Fields(v)[0]
					}
				}
			}
			plan, err := fix.PlanECMP(fix.ECMPInput{Interface: iface, Conf: conf, Tunnels: tunnels, Networks: networks, Bonds: bonds})
			if err != nil {
				return couldNotRun(err)
			}
			return plan.Write(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&host, "host", "local", "target: local, netns:NAME or ssh:[user@]host[:port]")
	cmd.Flags().StringVar(&root, "root", "/", "root of the configuration files on the target (for tests)")
	_ = cmd.Flags().MarkHidden("root")
	cmd.Flags().StringVar(&iface, "interface", "wg0", "the existing wg-quick tunnel to multiply")
	cmd.Flags().IntVar(&tunnels, "tunnels", 2, "number of tunnels (2..16)")
	cmd.Flags().StringSliceVar(&networks, "network", nil, "remote networks to spread (default: the peer's AllowedIPs outside the tunnel subnet)")
	cmd.Flags().BoolVar(&apply, "apply", false, "build the tunnels and the multipath route (wgperf lab only)")
	cmd.Flags().BoolVar(&verify, "verify", false, "with --apply: measure parallel-stream throughput before and after")
	cmd.Flags().IntVar(&seconds, "time", 3, "with --verify: seconds per iperf3 run")
	cmd.Flags().IntVar(&streams, "streams", 0, "with --verify: parallel TCP streams (default 8 per tunnel, so hashing leaves no tunnel idle)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --apply: print the result as JSON")
	return cmd
}

type ecmpOptions struct {
	tunnels, seconds, streams int
	verify, json              bool
}

// ecmpApplied is what "fix ecmp --apply" did in a lab.
type ecmpApplied struct {
	Lab      string       `json:"lab"`
	Tunnels  []lab.Tunnel `json:"tunnels"`
	Commands []string     `json:"commands"` // run on A
	Verify   *ecmpVerify  `json:"verify,omitempty"`
}

// ecmpVerify is the aggregate throughput to site B's network around the change.
type ecmpVerify struct {
	Addr           string  `json:"addr"`
	Streams        int     `json:"streams"`
	TunnelsBefore  int     `json:"tunnels_before"`
	BeforeMbit     float64 `json:"before_mbit"`
	AfterMbit      float64 `json:"after_mbit"`
	Scaling        float64 `json:"scaling"` // after / before
	SecondsPerTest int     `json:"seconds_per_test"`
}

// applyLabECMP builds N parallel tunnels and the multipath route in the lab
// that --host belongs to, measuring before and after with --verify.
func applyLabECMP(w io.Writer, host string, o ecmpOptions) error {
	name, node, ok := labNode(host)
	if !ok {
		return couldNotRun(fmt.Errorf("ecmp --apply builds tunnels only in a wgperf lab (--host netns:wgl-NAME-a): real hosts need new configs and keys on both ends, so wgperf prints them; run without --apply and install them on both sites"))
	}
	if node != "a" {
		return couldNotRun(fmt.Errorf("ecmp --apply starts from site A of lab %s: --host netns:%s", name, lab.Netns(name, "a")))
	}
	if o.tunnels < 2 || o.tunnels > 16 {
		return couldNotRun(fmt.Errorf("--tunnels %d: want 2..16", o.tunnels))
	}
	if o.seconds < 1 || o.seconds > 60 {
		return couldNotRun(fmt.Errorf("--time %d: want 1..60 seconds", o.seconds))
	}
	if o.streams == 0 {
		o.streams = min(8*o.tunnels, 128)
	}
	l, err := lab.Load(name)
	if err != nil {
		return couldNotRun(err)
	}
	// New tunnel ends run this binary, like the ones "lab up" started.
	if l.Executable, err = os.Executable(); err != nil {
		return couldNotRun(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	progress := progressLines(o.json)
	res := &ecmpApplied{Lab: name}
	measure := func(when string) (float64, error) {
		progress(fmt.Sprintf("%s: %d TCP streams to %s for %d s", when, o.streams, lab.SiteBLAN, 1+o.seconds))
		r, err := iperf.Run(ctx, l.Target("a"), l.Target("b"), iperf.Test{Addr: lab.SiteBLAN, Seconds: o.seconds, Omit: 1, Parallel: o.streams})
		if err != nil {
			return 0, fmt.Errorf("measure %s: %w", when, err)
		}
		return r.Mbit(), nil
	}
	if o.verify {
		res.Verify = &ecmpVerify{Addr: lab.SiteBLAN, Streams: o.streams, TunnelsBefore: ecmpTunnelsInUse(ctx, l), SecondsPerTest: o.seconds}
		if res.Verify.BeforeMbit, err = measure("before"); err != nil {
			return couldNotRun(err)
		}
	}
	progress(fmt.Sprintf("building %d tunnels between A and B", o.tunnels))
	if res.Commands, err = l.ECMP(ctx, o.tunnels); err != nil {
		return couldNotRun(fmt.Errorf("lab %s: %v (wgperf lab down --name %s removes everything)", name, err, name))
	}
	res.Tunnels = l.Tunnels[:o.tunnels]
	if o.verify {
		if res.Verify.AfterMbit, err = measure("after"); err != nil {
			return couldNotRun(err)
		}
		if res.Verify.BeforeMbit > 0 {
			res.Verify.Scaling = res.Verify.AfterMbit / res.Verify.BeforeMbit
		}
	}
	if o.json {
		return writeJSON(w, res)
	}
	ew := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	ew("Lab %s now has %d tunnels between A and B:\n", name, len(res.Tunnels))
	for _, t := range res.Tunnels {
		via := ""
		if t.UplinkA != "" {
			via = ", A sends via " + t.UplinkA
		}
		ew("  %s (%s) <-> %s (%s), port %d%s\n", t.IfA, t.AddrA, t.IfB, t.AddrB, t.Port, via)
	}
	ew("Ran on A:\n")
	for _, c := range res.Commands {
		ew("  %s\n", c)
	}
	if v := res.Verify; v != nil {
		ew("Aggregate throughput to %s (%d TCP streams, %d s):\n", v.Addr, v.Streams, v.SecondsPerTest)
		ew("  before  %7.1f Mbit/s (%d tunnel%s)\n", v.BeforeMbit, v.TunnelsBefore, plural(v.TunnelsBefore))
		ew("  after   %7.1f Mbit/s (%d tunnels)\n", v.AfterMbit, len(res.Tunnels))
		if v.Scaling > 0 {
			ew("  scaling %.2fx\n", v.Scaling)
		}
	}
	ew("This is the lab only; wgperf lab down --name %s removes it.\n", name)
	return nil
}

// ecmpTunnelsInUse counts the next hops of A's route to site B's network.
func ecmpTunnelsInUse(ctx context.Context, l *lab.Lab) int {
	out, err := l.Target("a").Run(ctx, "ip", "route", "show", lab.SiteBNet)
	if err != nil {
		return 1
	}
	if n := strings.Count(string(out), "nexthop"); n > 0 {
		return n
	}
	return 1
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
