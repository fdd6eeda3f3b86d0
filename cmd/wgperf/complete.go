package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/exporter"
	"github.com/wgperf/wgperf/internal/target"
)

// addCompletions makes shell completion ("wgperf completion bash") offer
// what a flag takes: targets (this machine, its network namespaces, the
// hosts of ~/.ssh/config and ~/.ssh/known_hosts), finding IDs, and the values of flags that take
// one of a few words (enumFlags).
func addCompletions(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		register := func(f *pflag.Flag) {
			switch f.Name {
			case "host", "client", "server":
				_ = c.RegisterFlagCompletionFunc(f.Name, completeTargets)
			case "only":
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(catalogIDs(), cobra.ShellCompDirectiveNoFileComp))
			default:
				if values, ok := enumFlags[f.Name]; ok {
					_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
				}
			}
		}
		c.Flags().VisitAll(register)
		c.PersistentFlags().VisitAll(register) // --progress, on the root
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// enumFlags are the flags that take one of a few words, by name, and the
// words (builds add theirs: lab up --topology in the full build).
var enumFlags = map[string][]string{
	"severity":   {"info", "warning", "critical"},
	"log.level":  exporter.LogLevels,
	"log.format": exporter.LogFormats,
	"progress":   progressModes,
}

// completeTargets offers what each kind of target lists (target.Complete).
func completeTargets(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return target.Complete(), cobra.ShellCompDirectiveNoFileComp
}
