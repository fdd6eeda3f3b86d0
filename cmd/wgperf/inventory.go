package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/fleet"
)

func inventoryCmd() *cobra.Command {
	var (
		sources    []string
		limit      string
		asJSON     bool
		prometheus bool
	)
	cmd := &cobra.Command{
		Use:   "inventory [--inventory SOURCE] [--limit PATTERN] [--json | --prometheus]",
		Short: "List an inventory's hosts, or give them to Prometheus as /probe targets (file_sd)",
		Long: `inventory reads an inventory as "wgperf diagnose --inventory" reads it (see diagnose
--help: a list of targets, an Ansible INI or YAML inventory, ansible-inventory --list JSON,
or a directory of them; --inventory may be repeated and the sources merge as Ansible
merges them; -i and -l are --inventory and --limit, and without --inventory the sources
of ANSIBLE_INVENTORY are read, as Ansible reads them) and prints the hosts --limit
selects, one per line: the inventory's name for the host and the target wgperf reaches
it as. Nothing is logged into.

--prometheus prints them as Prometheus file_sd JSON instead: one target group per host,
{"targets": ["ssh:root@198.51.100.10:2222"], "labels": {"wgperf_host": "gw1",
"wgperf_group": "routers", "wgperf_groups": ",routers,berlin,"}}, the target as the
exporter's /probe?target= takes it. Write it to a file of file_sd_configs and relabel the
target to __param_target, as deploy/prometheus/scrape.yml shows (job wgperf-inventory);
the central exporter's --probe.allow must admit the targets. The exporter logs in with
its own user's ssh settings: hosts whose inventory gives them a key, ssh arguments or
become are named in a warning on standard error (give them to the exporter's user in
~/.ssh/config). Or start the exporter with the same --inventory and --limit: it
serves this list at /sd for Prometheus' http_sd_configs, read again as the inventory
changes (see exporter --help; job wgperf-inventory-http).

Exit codes: 0 listed, 3 the inventory could not be read or --limit selects no host.`,
		Example: `  wgperf inventory --inventory hosts.ini --limit 'routers:!lab*'
  wgperf inventory --inventory inventory/ --inventory extra.yml --json
  wgperf inventory --inventory hosts.ini --prometheus > /etc/prometheus/wgperf-targets.json
  ANSIBLE_INVENTORY=~/ansible/hosts.ini wgperf inventory -l routers   # Ansible's default and spelling`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(sources) == 0 {
				sources = fleet.AnsibleInventory()
			}
			if len(sources) == 0 {
				return couldNotRun(fmt.Errorf("--inventory (-i): name an inventory file or directory, or set ANSIBLE_INVENTORY"))
			}
			return fleet.List(cmd.Context(), fleet.Listing{Sources: sources, Limit: limit, JSON: asJSON, Prometheus: prometheus, Version: version},
				cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	inventoryFlags(f, &sources, &limit, inventoryFlagHelp, "list only the hosts this Ansible pattern selects: "+limitSyntax)
	f.BoolVar(&asJSON, "json", false, "print the hosts as JSON (kind \"inventory\")")
	f.BoolVar(&prometheus, "prometheus", false, "print the hosts as Prometheus file_sd JSON of the exporter's /probe targets")
	return cmd
}

// inventoryFlagHelp is --inventory's help, the same for every command that takes it.
const inventoryFlagHelp = "inventory of hosts: a file of targets one per line, an Ansible INI or YAML inventory (.yml, .yaml) with its group_vars/ and host_vars/, ansible-inventory --list JSON (.json), or a directory of them (repeatable: sources merge as Ansible merges them; where --limit needs one and none is named, ANSIBLE_INVENTORY's; at most 10,000 hosts, 8 MiB a file, 8 directory levels)"

// limitSyntax is what --limit takes, the same for every command.
const limitSyntax = "group or host names, globs, ~regex, !exclude, &intersect, separated by , or :"

// inventoryFlags binds --inventory and --limit with Ansible's own short
// names, -i and -l, so "wgperf diagnose -i hosts.ini -l routers" reads as
// "ansible -i hosts.ini -l routers" does.
func inventoryFlags(f *pflag.FlagSet, sources *[]string, limit *string, sourcesHelp, limitHelp string) {
	f.StringArrayVarP(sources, "inventory", "i", nil, sourcesHelp)
	f.StringVarP(limit, "limit", "l", "", limitHelp)
}
