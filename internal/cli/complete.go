package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/target"
)

// AddCompletions makes shell completion ("wgperf completion bash") offer
// what a flag takes: targets (this machine, its network namespaces, the
// hosts of ~/.ssh/config and ~/.ssh/known_hosts), the finding IDs (ids) --only
// takes, and the values of flags that take one of a few words (EnumFlag).
func AddCompletions(root *cobra.Command, ids []string) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		register := func(f *pflag.Flag) {
			switch f.Name {
			case "host", "client", "server":
				_ = c.RegisterFlagCompletionFunc(f.Name, completeTargets)
			case "only":
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(ids, cobra.ShellCompDirectiveNoFileComp))
			case "interface", "dev":
				if WireGuardInterfaceFlag(c, f) {
					_ = c.RegisterFlagCompletionFunc(f.Name, completeWireGuardInterfaces)
				}
			default:
				if w, ok := f.Value.(Words); ok {
					_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(w.Words(), cobra.ShellCompDirectiveNoFileComp))
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

// Words is a flag value that takes one of a few words (EnumFlag's,
// --progress, --wireguard): completion offers them.
type Words interface{ Words() []string }

// completeTargets offers what each kind of target lists (target.Complete).
func completeTargets(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return target.Complete(), cobra.ShellCompDirectiveNoFileComp
}

// WireGuardInterfaceFlag says whether an --interface (or --dev) flag names a
// WireGuard interface of the command's host: every visible command's does
// (fix ecmp's tunnel, shape-sweep's); the lab's hidden node commands name
// their own TUN devices.
func WireGuardInterfaceFlag(c *cobra.Command, f *pflag.Flag) bool {
	for p := c; p != nil; p = p.Parent() {
		if p.Hidden {
			return false
		}
	}
	return f.Value.Type() == "string"
}

// completeWireGuardInterfaces offers the WireGuard interfaces of the host the
// command names (--host, else --client, else this machine), asked within a
// few seconds so an unreachable host does not hang the shell.
func completeWireGuardInterfaces(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	spec := "local"
	for _, name := range []string{"host", "client"} {
		if f := c.Flags().Lookup(name); f != nil {
			spec = f.Value.String()
			break
		}
	}
	t, err := target.Parse(spec)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names, _ := discover.Interfaces(ctx, t)
	return names, cobra.ShellCompDirectiveNoFileComp
}
