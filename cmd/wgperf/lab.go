//go:build !router

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/scenario"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// labName is the --name of every lab subcommand.
var labName string

// labCmd is "wgperf lab" and its subcommands.
func labCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Build WireGuard test topologies in network namespaces",
		Long: `The lab builds real WireGuard tunnels in network namespaces on this machine, so you
can watch wgperf diagnose and fix real problems without owning a tunnel. Needs root.
Its tunnel ends are the kernel's WireGuard where the module loads, else an embedded
userspace WireGuard (wireguard-go) per namespace (--wireguard chooses). "lab vm"
boots a distro kernel that has the module under QEMU when this machine's has not.

Topologies:
  site-to-site  A —— R —— B, WireGuard between A (10.77.0.1) and B (10.77.0.2);
                underlay A 198.51.100.2 — R — B 203.0.113.2
  multi-wan     A has a primary (198.51.100.2, metric 10) and a slow backup uplink
                (192.0.2.2, metric 20) to R, which reaches B's endpoint

Namespaces are named wgl-NAME-NODE (nodes a, r, b, and lan, lanb with --lan); run
commands in them with "wgperf lab exec NODE -- cmd" or target them as
--host netns:wgl-NAME-NODE.`,
	}
	cmd.PersistentFlags().StringVar(&labName, "name", "demo", "lab name (1-8 lowercase letters or digits)")
	cmd.AddCommand(labUpCmd(), labDownCmd(), labStatusCmd(), labExecCmd(), labRunCmd(), labVMCmd(), labFleetCmd())
	cmd.AddCommand(lab.Processes()...)
	return cmd
}

func labUpCmd() *cobra.Command {
	var cfg lab.Config
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Build a lab and wait until a ping crosses its tunnel",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Name = labName
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			l, err := lab.Up(cmd.Context(), cfg, exe)
			if err != nil {
				return err
			}
			if cfg.Router {
				fmt.Fprint(cmd.OutOrStdout(), l.RouterHint())
			}
			return printLabStatus(cmd.Context(), cmd.OutOrStdout(), l, false)
		},
	}
	cli.LabShapeFlags(cmd.Flags(), &cfg)
	cmd.Flags().BoolVar(&cfg.Router, "router", false, "node a is also an OpenWrt-like router: dropbear on port 2222 serving BusyBox, nft, wg, uci, logread")
	return cmd
}

func labDownCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove a lab: namespaces, node processes, sockets and state (also after a crash)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := []string{labName}
			if all {
				var err error
				if names, err = lab.List(cmd.Context()); err != nil {
					return err
				}
			}
			for _, n := range names {
				if err := lab.Down(cmd.Context(), n); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "lab %s: down\n", n)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every lab on this machine")
	return cmd
}

func labStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a lab's namespaces, WireGuard peers, handshakes and link shaping",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := lab.Load(labName)
			if err != nil {
				return err
			}
			return printLabStatus(cmd.Context(), cmd.OutOrStdout(), l, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON (kind \"lab-status\")")
	return cmd
}

func labExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "exec NODE -- COMMAND [ARG...]",
		Short: "Run a command in a lab node's namespace",
		Example: `  wgperf lab exec a -- ping -c 3 10.77.0.2
  wgperf lab exec b -- wg show`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := lab.Load(labName)
			if err != nil {
				return err
			}
			if l.Node(args[0]) == nil {
				return fmt.Errorf("lab %s has no node %q (nodes: %s)", labName, args[0], strings.Join(l.NodeNames(), ", "))
			}
			err = l.Target(args[0]).Stream(cmd.Context(), os.Stdin, os.Stdout, os.Stderr, args[1], args[2:]...)
			if err != nil {
				return &ExitError{Code: 1}
			}
			return nil
		},
	}
}

// buildFlavor names this build in "wgperf version": "" for the full one.
const buildFlavor = ""

// labECMP is what "fix ecmp" takes from the wgperf lab host belongs to.
func labECMP(host target.Target) verify.ECMPSite {
	exe, err := os.Executable()
	if err != nil {
		return verify.ECMPSite{}
	}
	return verify.ECMPSite(lab.ECMPOf(host.String(), exe))
}

// labRunReport is the report of "lab run --json" (report --from).
func labRunReport(d *document.Doc) (report.Document, error) { return scenario.ReadReport(d) }

// labPeer is, for site A or B of a wgperf lab, the other site.
func labPeer(host target.Target) (target.Target, bool) { return lab.PeerOf(host.String()) }

// printLabStatus reads a lab's status and prints it.
func printLabStatus(ctx context.Context, w io.Writer, l *lab.Lab, asJSON bool) error {
	st, err := l.Status(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, document.LabStatus, l.Report(st))
	}
	return l.WriteStatus(w, st)
}
