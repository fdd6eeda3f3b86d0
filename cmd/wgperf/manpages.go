//go:build !router

package main

// "make man": roff man pages for wgperf and every subcommand, from the
// command tree itself (cobra's generator), with wgperf(1) also listing the exit
// codes and the files wgperf reads and writes. The router build leaves the
// generator out.

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/remedy"
)

func init() { extraCommands = append(extraCommands, manPagesCmd) }

func manPagesCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "manpages DIR",
		Short:  "Write the man pages of wgperf and its subcommands into DIR (make man)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// wgperf(1) also says what every command's exit status means and
			// which files wgperf touches, before SEE ALSO.
			m := cli.ManPages{Source: "wgperf " + version, SeeAlso: seeAlso, Sections: []cli.ManSection{
				{Title: "EXIT STATUS", Items: exitStatus}, {Title: "FILES", Items: files}, {Title: "ENVIRONMENT", Items: environment}}}
			if err := cli.WriteManPages(newRoot(), args[0], m); err != nil {
				return couldNotRun(err)
			}
			return nil
		},
	}
}

// exitStatus is the EXIT STATUS section of wgperf(1): the codes every
// command shares (main.go).
var exitStatus = []cli.ManItem{
	{Tag: fmt.Sprint(exitOK), Text: "Nothing at or above a warning was found (or the command has no findings)."},
	{Tag: fmt.Sprint(exitWarning), Text: "A warning was found; for icmp-burst a rate limiter, for shape-sweep a recommended cap, for fix --verify a change rolled back because it did not help."},
	{Tag: fmt.Sprint(exitCritical), Text: "A critical finding: something breaks the tunnel's throughput now."},
	{Tag: fmt.Sprint(exitFailed), Text: "The command could not run: bad flags or input, an unreachable host, a missing tool. Also diagnose's UNKNOWN: no host had a WireGuard interface, so nothing was judged."},
}

// files is the FILES section of wgperf(1): what wgperf fix writes on a
// target (runtime changes are made persistent there) and what it keeps.
var files = []cli.ManItem{
	{Tag: remedy.SysctlConf, Text: "Sysctl values set by wgperf fix (UDP and TCP buffers, backlog, congestion control, conntrack)."},
	{Tag: remedy.ModulesConf, Text: "Kernel modules wgperf fix loads at boot (tcp_bbr)."},
	{Tag: "/etc/wgperf/nft/", Text: "wgperf's own nftables table (MSS clamping, NOTRACK), one file per chain, included from /etc/nftables.conf."},
	{Tag: "/etc/wireguard/IFACE.conf", Text: "wg-quick configuration: wgperf fix sets MTU = and tbf caps (PostUp) there; fix ecmp reads it."},
	{Tag: fix.JournalDir, Text: "The journal of each wgperf fix --apply: every step with the state before it, for wgperf fix rollback (also after a crash)."},
	{Tag: fix.OpenWrtJournalDir, Text: "The same journal on OpenWrt, where /var does not survive a reboot."},
	{Tag: "/etc/config/", Text: "OpenWrt: uci options wgperf fix sets (network, banip) are committed there."},
	{Tag: "~/.ssh/config", Text: "Read by the system ssh for ssh: targets (user, port, ProxyJump, keys)."},
	{Tag: "/etc/wgperf/web-config.yml", Text: "The exporter's TLS and basic authentication (--web.config.file; an example is " + docDir + "web-config.yml)."},
	{Tag: kitDir + "prometheus/alerts.yml", Text: "Prometheus alert rules for the exporter's metrics (.deb, .rpm); every alert's runbook_url is its page."},
	{Tag: kitDir + "prometheus/scrape.yml", Text: "Example Prometheus scrape jobs: hosts running wgperf exporter, and routers collected over ssh through /probe."},
	{Tag: kitDir + "grafana/wgperf.json", Text: "A Grafana dashboard of the exporter's metrics (import it; its variables pick the data source and hosts)."},
	{Tag: lab.StateDir, Text: "State and node logs of each wgperf lab (removed by wgperf lab down)."},
}

// environment is the ENVIRONMENT section of wgperf(1).
var environment = []cli.ManItem{
	{Tag: "NO_COLOR", Text: "Set to anything but the empty string: no colours, also on a terminal (no-color.org)."},
	{Tag: "LISTEN_FDS, LISTEN_PID", Text: "Set by systemd for a .socket unit: wgperf exporter --web.systemd-socket serves the sockets they name."},
}

// seeAlso are the other tools' pages every page refers to, after wgperf's own.
var seeAlso = []string{"wg(8)", "wg-quick(8)", "iperf3(1)"}
