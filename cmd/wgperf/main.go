// Command wgperf finds out why a WireGuard tunnel is slower than the link under
// it, proves it with measurements, fixes it safely and measures again.
//
// main stays thin: each subcommand lives in its own file, parses its flags and
// calls into internal packages. newRoot lists the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/buildinfo"
	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// version is set at build time with -ldflags "-X main.version=..."; without
// it, the module version go install recorded, or "dev" (buildinfo.Version).
// The rest of the build's identity is internal/buildinfo's.
var version string

func init() { version = buildinfo.Version(version) }

// newRoot builds the command tree afresh, so each run starts from default flags.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "wgperf",
		Short: "Find out why a WireGuard tunnel is slower than the link under it, and fix it",
		Long: `wgperf measures a WireGuard tunnel against the link under it, diagnoses why it is
slower (MTU and PMTUD black holes, UDP buffer drops, stale endpoint routes,
firewall rate limits, congestion control, conntrack...), applies fixes safely
with rollback, and measures again.

Start on one end of the slow tunnel, as root:
  wgperf doctor --client local --server ssh:root@OTHER-END

Hosts are named as targets:
` + target.Help() + `
Progress goes to standard error when it is a terminal; --progress always or never
decides instead (e.g. "ssh host wgperf doctor ... --progress always").

Exit codes: 0 ok, 1 warnings found, 2 critical findings, 3 unknown: nothing was
judged (no WireGuard interface on any host) or the command could not run.`,
		Example:       rootExamples(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		// Nonsense flag values are refused before any command runs.
		PersistentPreRunE: cli.CheckFlags,
	}
	progress.Mode = "auto"
	root.PersistentFlags().Var(&progress.Mode, "progress", "show progress on standard error: auto (when it is a terminal), always, never")
	root.AddCommand(versionCmd())
	// "wgperf --version" and "wgperf version" say the same.
	root.SetVersionTemplate(versionLine() + "\n")
	root.AddCommand(benchCmd(), collectCmd(), checksCmd(), diagnoseCmd(), doctorCmd(), explainCmd(), exporterCmd(), fixCmd(), icmpBurstCmd(),
		inventoryCmd(), labCmd(), mtuCmd(), reportCmd(), shapeSweepCmd(), dropsCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	cli.AddCompletions(root, catalogIDs())
	cli.OneDefault(root)
	return root
}

// rootExamples lead with doctor's one-liner: the command a user with a slow
// tunnel runs first. The lab's line is the full build's.
func rootExamples() string {
	ex := `  wgperf doctor --client local --server ssh:root@OTHER-END        # why the tunnel is slower than the link under it: the cause, its fix
  wgperf doctor --client local --server ssh:root@OTHER-END --fix  # apply the top cause's fix, verified, and bench again
  wgperf diagnose --host ssh:root@golem --host ssh:root@m42       # the checks of both ends, no traffic sent
  wgperf fix --host ssh:root@golem                                # the plan of every fix, changing nothing
  wgperf exporter --web.listen-address 127.0.0.1:9723             # the same facts and findings as Prometheus metrics`
	if buildFlavor == "" {
		ex += `
  wgperf lab run pmtud-blackhole                                  # no tunnel of your own: a real case in namespaces (root, iperf3, nft)`
	}
	return ex
}

// extraCommands are commands only some builds have (the full build's hidden
// man page generator).
var extraCommands []func() *cobra.Command

func versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the wgperf version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), document.Version, buildinfo.Read(version).Identity(buildFlavor, drops.Built))
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build's identity as JSON (kind \"version\"; the version is wgperf_version)")
	return cmd
}

// versionLine is what "wgperf version" prints (buildinfo.Info.Line).
func versionLine() string { return buildinfo.Read(version).Line(buildFlavor, drops.Built) }

// stdoutWriter is wgperf's standard output: foreign text escaped, and
// whether a terminal is behind it (colours).
type stdoutWriter struct {
	*shell.TerminalWriter
	raw io.Writer
	tty bool
}

// ExitError carries a specific exit code out of a command; Err may be nil when
// the command already printed what it had to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// couldNotRun marks err as the reason a command could not run (exit 3).
func couldNotRun(err error) error { return &ExitError{Code: exitFailed, Err: err} }

// Exit codes shared by all commands.
const (
	exitOK       = 0
	exitWarning  = 1
	exitCritical = 2
	// exitUnknown is the verdict when nothing was judged (no WireGuard
	// interface), as a monitoring plugin's UNKNOWN; a command that could not
	// run (bad input, unreachable host, missing tool) says the same.
	exitUnknown = 3
	exitFailed  = exitUnknown
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole CLI: it parses args, runs one command and returns the exit
// code, printing errors as one "wgperf: ..." line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	// Ctrl-C and SIGTERM cancel the context: commands stop between steps and
	// undo what they set up (labs, host sysctls, servers) instead of dying
	// with the host half changed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer target.CloseAll() // shared ssh connections and their socket directory
	// Snapshots, findings files and remote output are others' text: their
	// escape sequences are shown, never obeyed, on a terminal and also where
	// one reads the output later (| tee, > file, less -R). JSON keeps its
	// values (shell.TerminalWriter).
	out := &stdoutWriter{TerminalWriter: shell.NewTerminalWriter(stdout), raw: stdout}
	if f, ok := stdout.(*os.File); ok {
		out.tty = term.IsTerminal(int(f.Fd()))
	}
	defer out.Flush()
	stdout = out
	progress = cli.NewProgress(stderr)
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(stderr, "wgperf: interrupted:", shell.Terminal(err.Error()))
		return exitFailed
	}
	if err == nil {
		return exitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, "wgperf:", shell.Terminal(ee.Err.Error()))
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "wgperf:", shell.Terminal(err.Error()))
	return exitFailed
}
