//go:build !router

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/lab/guest"
	"github.com/wgperf/wgperf/internal/shell"
)

// labVMCmd is "wgperf lab vm": a guest kernel with the WireGuard module.
func labVMCmd() *cobra.Command {
	var opts guest.Options
	var accel string
	cmd := &cobra.Command{
		Use:   "vm [flags] -- COMMAND [ARG...]",
		Short: "Boot a kernel that has WireGuard under QEMU on this machine's files and run a command in it",
		Long: `lab vm boots a distro kernel whose modules include WireGuard and netem (Debian's
linux-image-amd64) under QEMU with virtme-ng, on this machine's own root filesystem
(read-only, with throw-away overlays), and runs COMMAND inside it as root in the
current directory. Its exit status is the command's.

Use it where this machine's kernel has no WireGuard module: inside, the lab's
tunnel ends are the kernel's WireGuard (lab up and lab run pick it by default),
so every case can be proven on the implementation most tunnels run.

KVM is used when a guest boots with it; otherwise QEMU emulates the CPU (TCG):
about half a minute to boot and a tenth of the speed, which the lab's sizing
absorbs. A KVM guest that has not started the command within 60 s (on some
hosts it hangs without a word) is killed, the host is remembered as one where
KVM fails (/run/wgperf/guest-kvm-fails, until reboot), and TCG takes over; a
TCG guest gets 240 s. The guest never outlives wgperf, however wgperf ends.
make deps-guest installs what it needs (qemu-system-x86, busybox-static,
linux-image-amd64, virtme-ng).`,
		Example: `  wgperf lab vm -- wgperf lab run pmtud-blackhole
  wgperf lab vm -- sh -c 'wgperf lab up --name k && wgperf doctor --client netns:wgl-k-a --server netns:wgl-k-b'
  wgperf lab vm --rwdir out -- wgperf lab run --all --html out/kernel.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Accel = guest.AccelAuto // --accel auto
			if accel != "auto" {
				opts.Accel = guest.Accel(accel)
			}
			if os.Geteuid() != 0 {
				return couldNotRun(fmt.Errorf("lab vm needs root (the guest runs the lab as root on this machine's files)"))
			}
			progress := progressLines()
			opts.Progress = progress
			// Without KVM the guest is several times slower: say so even
			// where no progress is shown (progress says it otherwise).
			errOut, shown := cmd.ErrOrStderr(), progressTo() != nil
			opts.Accelerator = func(s string) {
				if !shown {
					fmt.Fprintln(errOut, "wgperf: lab vm:", shell.Terminal(s))
				}
			}
			// The guest's command is the user's own: its output passes as it is, as lab exec's does.
			res, err := guest.Run(cmd.Context(), opts, args, rawOutput(cmd.OutOrStdout()), cmd.ErrOrStderr())
			if err != nil {
				return couldNotRun(err)
			}
			if res.ExitCode != 0 {
				return &ExitError{Code: res.ExitCode}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kernel, "kernel", "", "kernel image to boot (default: the newest /boot/vmlinuz-* with a WireGuard module)")
	cli.EnumFlag(f, &accel, "accel", "auto", []string{"auto", "kvm", "tcg"}, "auto (KVM when a guest boots with it, else TCG), kvm or tcg")
	f.StringVar(&opts.Memory, "memory", "2G", "guest memory")
	f.IntVar(&opts.CPUs, "cpus", 0, "guest CPUs (default: this machine's)")
	f.StringArrayVar(&opts.RWDirs, "rwdir", nil, "a host folder the guest may write (repeatable); everything else it writes is thrown away")
	f.StringArrayVar(&opts.Env, "env", nil, "NAME=value set for the command in the guest (repeatable)")
	return cmd
}

// rawOutput is where a command the user runs himself (lab exec, lab vm)
// prints: w itself, unescaped, as his own shell would show it.
func rawOutput(w io.Writer) io.Writer {
	if s, ok := w.(*stdoutWriter); ok {
		return s.raw
	}
	return w
}
