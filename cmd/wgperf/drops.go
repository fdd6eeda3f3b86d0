//go:build !router

package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
)

func dropsCmd() *cobra.Command {
	var (
		hostSpec string
		duration time.Duration
		serve    bool
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "drops",
		Short: "Count the packets the kernel drops, by the reason it gives",
		Long: `drops attaches a BPF program to the kernel's skb:kfree_skb tracepoint for
--duration (or until Ctrl-C) and counts every packet the kernel drops by its
drop reason (Linux 5.17 and later), the kernel function that dropped it and the
interface it was on, in the host's network namespace. bench and doctor run the
same sampler around every measurement; this command watches a host alone.

The sampler picks its tier at run time and says which: btf (reason names and
offsets from the kernel's BTF), tracepoint (from tracefs's format file; mount
tracefs if it is not), or none (not root, no BPF, a kernel without drop
reasons, the router build). On an ssh host it runs the host's own wgperf
(wgperf drops --serve) over the connection; without wgperf there it says so.
It only counts: nothing on the host is changed, and the program is detached on
exit, also on Ctrl-C (the kernel detaches it if wgperf dies).

With --json the counts are a document of kind "drops" (schemas/drops.schema.json):
the sampler's status, the seconds counted and one entry per reason, function
and interface, most packets first.

Exit codes: 0 counted, 3 could not run (the line says why).`,
		Example: `  wgperf drops --duration 10s
  wgperf drops --host netns:wgl-demo-b --duration 30s
  wgperf drops --host ssh:root@golem
  wgperf drops --duration 30s --json | jq '.counts[] | select(.packets > 100)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context() // cancelled by SIGINT and SIGTERM (run)
			if serve {
				// The far end of bench's and doctor's ssh sampler: this
				// machine, its own namespace.
				return drops.Serve(ctx, os.Stdin, cmd.OutOrStdout(), target.Local())
			}
			host, err := target.Parse(hostSpec)
			if err != nil {
				return couldNotRun(err)
			}
			res, err := drops.Watch(ctx, host, duration)
			if err != nil {
				return couldNotRun(err)
			}
			return writeResult(cmd.OutOrStdout(), document.Drops, res, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&hostSpec, "host", "local", target.FlagHelp("target to watch"))
	f.DurationVar(&duration, "duration", 10*time.Second, "how long to count")
	f.BoolVar(&asJSON, "json", false, "print the counts as JSON (kind \"drops\")")
	f.BoolVar(&serve, drops.ServeFlag[2:], false, "serve this machine's sampler on standard input and output (bench and doctor run it over ssh)")
	_ = f.MarkHidden(drops.ServeFlag[2:])
	return cmd
}
