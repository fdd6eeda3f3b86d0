package main

import (
	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

func diagnoseCmd() *cobra.Command {
	var (
		c        diagnose.Command
		htmlPath string
	)
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Find what slows a WireGuard tunnel down, from live hosts or saved snapshots",
		Long: `diagnose collects facts from each --host (in parallel) and reads each --from snapshot,
runs every check on every host, and compares the two ends of each tunnel (matched by
public key): their MTUs, their handshakes, and what each end counts as sent against what
the other counts as received (loss in one direction only). It prints the findings
grouped by severity, each with its evidence and the exact commands and config lines
that fix it. Nothing on any host is changed.

--inventory FILE (-i, as Ansible spells it; --limit is -l) diagnoses a fleet. FILE lists one target per line (` + target.Syntax() + `;
# comments and blank lines allowed) or is an Ansible inventory
as Ansible reads it: INI ([group] sections of "host ansible_host=1.2.3.4 ansible_user=root
ansible_port=2222" lines, read as ssh:root@1.2.3.4:2222; host ranges web[01:20];
[group:vars], [group:children]), YAML (.yml, .yaml), or the JSON of "ansible-inventory
--list" (.json). group_vars/ and host_vars/ beside it are read, variables resolve in
Ansible's precedence, and --limit selects hosts as ansible --limit does (groups, hosts,
globs, ~regex, !exclude, &intersect). --inventory may name a directory, read as Ansible
reads one: its files in name order (sub-directories too), hidden names, group_vars/,
host_vars/ and *.cfg, *.retry, *.orig, *.md, *.txt, *.bak, *~ skipped, its own
group_vars/ and host_vars/ read. It may be repeated: the sources merge in order as Ansible
merges several -i (groups add up, a later source's variables win). --list-hosts prints the
hosts --limit selects (name and target, one per line; --json as kind "inventory") and
exits without logging into any. ansible_ssh_private_key_file,
ansible_ssh_common_args/_extra_args (-o ProxyJump=user@bastion, -J; nothing that runs a
command) and ansible_become (sudo -n, for hosts that refuse root logins) are used;
ansible_connection=local runs locally. The Ansible settings (ansible_...) wgperf does not
use are named in one warning line on standard error, each once; the inventory's own
variables and interpreters are its playbooks' and pass silently. With --limit or
--list-hosts and no --inventory, ANSIBLE_INVENTORY's sources (comma separated) are read,
as Ansible reads them without -i. At most --concurrency hosts are
collected at once, each within --host-timeout. A host that is down or too slow is listed
under UNREACHABLE (JSON: "unreachable": [{host, name, error}]) and the others are diagnosed
without it; with --host alone, any unreachable host fails the run.

Exit codes: 0 nothing at or above --severity warning, 1 warnings, 2 critical findings,
3 unknown: no host had a WireGuard interface (and nothing at or above a warning was
found), so nothing was judged, or the command could not run (unreachable --host, unreadable snapshot or
inventory, no inventory host answered). With --inventory an unreachable host alone does not change the exit code.`,
		Example: `  wgperf diagnose
  wgperf diagnose --host ssh:root@golem --host ssh:m42
  wgperf diagnose --from golem.json --from m42.json --json
  wgperf diagnose --host netns:wgl-demo-a --host netns:wgl-demo-b --severity warning
  wgperf diagnose --inventory hosts.ini --concurrency 16 --host-timeout 15s --json
  wgperf diagnose --inventory inventory/hosts.yml --limit 'routers:!lab*'
  wgperf diagnose --inventory inventory/ --inventory extra.ini --limit routers --list-hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.Check(); err != nil {
				return couldNotRun(err)
			}
			ctx := cmd.Context() // cancelled by SIGINT and SIGTERM (run)
			if c.ListHosts {
				return fleet.List(ctx, fleet.Listing{Sources: c.Inventory, Limit: c.Options.Limit, Extra: c.Hosts, JSON: c.JSON, Version: version}, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if w := progressTo(); w != nil { // a --json document goes to stdout
				c.Options.Progress = w
			}
			out := cmd.OutOrStdout()
			c.Options.Warn, c.Color, c.Version = cmd.ErrOrStderr(), useColor(out), version
			d, fl, err := diagnose.RunCommand(ctx, c, out)
			if err != nil {
				return couldNotRun(err)
			}
			if htmlPath != "" {
				doc := report.FromDiagnosis(d)
				if fl != nil {
					doc.Unreachable = fl.Unreachable
				}
				if err := report.WriteFile(htmlPath, doc); err != nil {
					return err
				}
			}
			if d.Unknown() {
				return &ExitError{Code: exitUnknown} // the text says why
			}
			return findingsExit(d.Findings)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&c.Hosts, "host", nil, target.FlagHelp("target to collect from")+" (repeatable; default local)")
	f.StringArrayVar(&c.Files, "from", nil, "snapshot file written by wgperf collect, - for standard input (repeatable)")
	f.BoolVar(&c.JSON, "json", false, "print the diagnosis as JSON")
	addHTMLFlag(cmd, &htmlPath)
	cli.EnumFlag(f, &c.Severity, "severity", "info", []string{"info", "warning", "critical"}, "show only findings at or above this severity: info, warning, critical")
	f.Float64Var(&c.Options.Check.PathRateMbit, "rate", check.DefaultPathRateMbit, "path rate in Mbit/s for the bandwidth-delay product TCP buffers must cover")
	f.DurationVar(&c.Options.Check.PathRTT, "rtt", check.DefaultPathRTT, "path round-trip time for the bandwidth-delay product (at most 10s)")
	f.BoolVar(&c.Options.Collect.SkipFirewall, "skip-firewall", false, "do not read nftables, iptables or conntrack (their checks are skipped)")
	inventoryFlags(f, &c.Inventory, &c.Options.Limit, inventoryFlagHelp, "diagnose only the inventory's hosts this Ansible pattern selects: "+limitSyntax)
	f.BoolVar(&c.ListHosts, "list-hosts", false, "print the hosts --inventory and --limit select (name and target) and exit, logging into none")
	f.IntVar(&c.Options.Concurrency, "concurrency", fleet.DefaultConcurrency, "collect at most this many hosts at once")
	f.DurationVar(&c.Options.HostTimeout, "host-timeout", fleet.DefaultHostTimeout, "give up on a host that has not been collected after this long")
	return cmd
}
