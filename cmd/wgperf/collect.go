package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/outfile"
	"github.com/wgperf/wgperf/internal/target"
)

func collectCmd() *cobra.Command {
	var host, output string
	var skipFirewall bool
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Read a host's WireGuard, routing, link, counter and firewall facts into a JSON snapshot",
		Long: `collect reads everything wgperf's checks look at (WireGuard interfaces and peers,
routes and rules, links with their offloads and shapers (tc), kernel counters,
sysctls, nftables/iptables, conntrack, OpenWrt uci and mwan3, IPsec policies and
algorithms) and writes it as
one JSON snapshot. Private and preshared keys are never included (IPsec's are cut
on the host before its output leaves it), and of the uci configuration only the
options the checks read (an allow-list: no passwords, PSKs, update or API keys), so the
file can be sent for offline diagnosis with "wgperf diagnose --from FILE".
Nothing on the host is changed.`,
		Example: `  wgperf collect
  wgperf collect --host ssh:root@golem -o golem.json
  wgperf collect --host netns:wgl-demo-a`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := target.Parse(host)
			if err != nil {
				return couldNotRun(err)
			}
			ctx := cmd.Context() // cancelled by SIGINT and SIGTERM (run)
			snap, err := collect.Collect(ctx, t, collect.Options{SkipFirewall: skipFirewall})
			if err != nil {
				return couldNotRun(err)
			}
			var raw, buf bytes.Buffer
			if err := document.WriteSnapshot(&raw, snap); err != nil {
				return couldNotRun(err)
			}
			if err := document.WriteJSON(&buf, document.Snapshot, version, raw.Bytes()); err != nil {
				return couldNotRun(err)
			}
			if output == "" || output == "-" {
				_, err = cmd.OutOrStdout().Write(buf.Bytes())
			} else {
				// Often as root: a link planted on the way is not followed.
				err = outfile.WriteFile(output, buf.Bytes(), 0o600)
			}
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("write snapshot: %v", err)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "local", target.FlagHelp("target"))
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the snapshot to this new file, following no link on its path (default: standard output)")
	cmd.Flags().BoolVar(&skipFirewall, "skip-firewall", false, "do not read nftables, iptables or conntrack")
	return cmd
}
