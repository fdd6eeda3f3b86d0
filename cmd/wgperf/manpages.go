//go:build !router

package main

// "make man": roff man pages for wgperf and every subcommand, from the
// command tree itself (cobra's generator), with wgperf(1) also listing the exit
// codes and the files wgperf reads and writes. The router build leaves the
// generator out.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

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
			if err := writeManPages(args[0]); err != nil {
				return couldNotRun(err)
			}
			return nil
		},
	}
}

// exitStatus is the EXIT STATUS section of wgperf(1): the codes every
// command shares (main.go).
var exitStatus = []manItem{
	{fmt.Sprint(exitOK), "Nothing at or above a warning was found (or the command has no findings)."},
	{fmt.Sprint(exitWarning), "A warning was found; for icmp-burst a rate limiter, for shape-sweep a recommended cap, for fix --verify a change rolled back because it did not help."},
	{fmt.Sprint(exitCritical), "A critical finding: something breaks the tunnel's throughput now."},
	{fmt.Sprint(exitFailed), "The command could not run: bad flags or input, an unreachable host, a missing tool. Also diagnose's UNKNOWN: no host had a WireGuard interface, so nothing was judged."},
}

// files is the FILES section of wgperf(1): what wgperf fix writes on a
// target (runtime changes are made persistent there) and what it keeps.
var files = []manItem{
	{remedy.SysctlConf, "Sysctl values set by wgperf fix (UDP and TCP buffers, backlog, congestion control, conntrack)."},
	{remedy.ModulesConf, "Kernel modules wgperf fix loads at boot (tcp_bbr)."},
	{"/etc/wgperf/nft/", "wgperf's own nftables table (MSS clamping, NOTRACK), one file per chain, included from /etc/nftables.conf."},
	{"/etc/wireguard/IFACE.conf", "wg-quick configuration: wgperf fix sets MTU = and tbf caps (PostUp) there; fix ecmp reads it."},
	{fix.JournalDir, "The journal of each wgperf fix --apply: every step with the state before it, for wgperf fix rollback (also after a crash)."},
	{fix.OpenWrtJournalDir, "The same journal on OpenWrt, where /var does not survive a reboot."},
	{"/etc/config/", "OpenWrt: uci options wgperf fix sets (network, banip) are committed there."},
	{"~/.ssh/config", "Read by the system ssh for ssh: targets (user, port, ProxyJump, keys)."},
	{"/etc/wgperf/web-config.yml", "The exporter's TLS and basic authentication (--web.config.file; an example is " + docDir + "web-config.yml)."},
	{kitDir + "prometheus/alerts.yml", "Prometheus alert rules for the exporter's metrics (.deb, .rpm); every alert's runbook_url is its page."},
	{kitDir + "prometheus/scrape.yml", "Example Prometheus scrape jobs: hosts running wgperf exporter, and routers collected over ssh through /probe."},
	{kitDir + "grafana/wgperf.json", "A Grafana dashboard of the exporter's metrics (import it; its variables pick the data source and hosts)."},
	{lab.StateDir, "State and node logs of each wgperf lab (removed by wgperf lab down)."},
}

// environment is the ENVIRONMENT section of wgperf(1).
var environment = []manItem{
	{"NO_COLOR", "Set to anything but the empty string: no colours, also on a terminal (no-color.org)."},
	{"LISTEN_FDS, LISTEN_PID", "Set by systemd for a .socket unit: wgperf exporter --web.systemd-socket serves the sockets they name."},
}

// seeAlso are the other tools' pages every page refers to, after wgperf's own.
var seeAlso = []string{"wg(8)", "wg-quick(8)", "iperf3(1)"}

// manItem is one tagged paragraph of a man page.
type manItem struct{ tag, text string }

// writeManPages writes wgperf.1 and wgperf-SUBCOMMAND.1 for every command
// into dir (created if missing).
func writeManPages(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := newRoot()
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Section: "1", Source: "wgperf " + version, Manual: "wgperf manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return err
	}
	// Every page's SEE ALSO goes on to the tools wgperf works beside.
	pages, err := filepath.Glob(filepath.Join(dir, "wgperf*.1"))
	if err != nil {
		return err
	}
	var refs []string
	for _, r := range seeAlso {
		name, section, _ := strings.Cut(strings.TrimSuffix(r, ")"), "(")
		refs = append(refs, fmt.Sprintf("\\fB%s\\fP(%s)", roffEscape(name), section))
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			return err
		}
		at := bytes.Index(b, []byte(".SH SEE ALSO\n"))
		if at < 0 {
			continue
		}
		end := bytes.IndexByte(b[at+len(".SH SEE ALSO\n"):], '\n')
		if end < 0 {
			continue
		}
		end += at + len(".SH SEE ALSO\n")
		out := append(append(append([]byte{}, b[:end]...), []byte(", "+strings.Join(refs, ", "))...), b[end:]...)
		if err := os.WriteFile(page, out, 0o644); err != nil {
			return err
		}
	}
	// wgperf(1) also says what every command's exit status means and which
	// files wgperf touches, before SEE ALSO.
	page := filepath.Join(dir, "wgperf.1")
	b, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	var extra bytes.Buffer
	writeManSection(&extra, "EXIT STATUS", exitStatus)
	writeManSection(&extra, "FILES", files)
	writeManSection(&extra, "ENVIRONMENT", environment)
	at := bytes.Index(b, []byte(".SH SEE ALSO"))
	if at < 0 {
		at = len(b)
	}
	out := append(append(append([]byte{}, b[:at]...), extra.Bytes()...), b[at:]...)
	return os.WriteFile(page, out, 0o644)
}

// writeManSection writes a roff section of tagged paragraphs.
func writeManSection(b *bytes.Buffer, title string, items []manItem) {
	fmt.Fprintf(b, ".SH %s\n", title)
	for _, it := range items {
		fmt.Fprintf(b, ".TP\n\\fB%s\\fP\n%s\n", roffEscape(it.tag), roffEscape(it.text))
	}
	b.WriteString("\n")
}

// roffEscape keeps text literal in roff: backslashes, a leading dot or quote
// (a request), and hyphens (minus signs, for copying commands and paths).
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
