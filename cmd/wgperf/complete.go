package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/exporter"
)

// addCompletions makes shell completion ("wgperf completion bash") offer
// what a flag takes: targets (this machine, its network namespaces, the
// hosts of ~/.ssh/config), finding IDs, and the values of flags that take
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

func completeTargets(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	out := []string{"local"}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			out = append(out, "netns:"+e.Name())
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		for _, h := range sshConfigHosts(filepath.Join(home, ".ssh", "config")) {
			out = append(out, "ssh:"+h)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// sshConfigHosts lists the concrete Host names of an ssh config (patterns
// with wildcards or negations name no single host).
func sshConfigHosts(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var hosts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.EqualFold(fields[0], "host") {
			continue
		}
		for _, h := range fields[1:] {
			if !strings.ContainsAny(h, "*?!") {
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}
