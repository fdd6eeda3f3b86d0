package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// Implementation is the WireGuard a lab's tunnel ends run.
type Implementation string

const (
	// Kernel is the in-kernel module (Linux ≥ 5.6, OpenWrt): "ip link add
	// type wireguard" in each namespace, no process and no UAPI socket. It
	// clears DF on its outer packets and receives through a UDP encapsulation
	// hook, with no socket queue of its own.
	Kernel Implementation = "kernel"
	// Userspace is the embedded wireguard-go: one wgperf "lab _node" process
	// per tunnel end, serving wg(8)'s UAPI socket through a TUN device.
	Userspace Implementation = "userspace"
)

// ParseImplementation reads a --wireguard value: kernel, userspace, or ""
// (auto) for "kernel where the module loads, else userspace".
func ParseImplementation(s string) (Implementation, error) {
	switch s {
	case "", "auto":
		return "", nil
	case string(Kernel), string(Userspace):
		return Implementation(s), nil
	}
	return "", fmt.Errorf("--wireguard %q: want kernel, userspace or auto", s)
}

// probeLink is the throw-away link the kernel check creates.
const probeLink = "wgperf-probe"

// KernelWireGuard reports whether this kernel can create WireGuard links: it
// loads the module if it is not loaded (modprobe, as wg-quick's "ip link
// add" would) and creates and deletes a link in namespace ns. A reason is
// returned when it cannot, for "lab status" and the stories to print.
func KernelWireGuard(ctx context.Context, ns string) (bool, string) {
	host := target.Local()
	if _, err := os.Stat("/sys/module/wireguard"); err != nil {
		// Not loaded (or built in without parameters): modprobe settles both.
		_, _ = host.Run(ctx, "modprobe", "-q", "wireguard")
	}
	t := target.Netns(ns)
	if _, err := t.Run(ctx, "ip", "link", "add", "dev", probeLink, "type", "wireguard"); err != nil {
		reason := "this kernel has no WireGuard module"
		if uname, err := host.Run(ctx, "uname", "-r"); err == nil {
			reason = fmt.Sprintf("kernel %s has no WireGuard module", strings.TrimSpace(string(uname)))
		}
		return false, reason
	}
	_, _ = t.Run(ctx, "ip", "link", "del", "dev", probeLink)
	return true, ""
}

// Detect resolves impl: "" becomes Kernel where this kernel creates
// WireGuard links (tried in a throw-away namespace), else Userspace, with the
// reason; Kernel and Userspace come back as they are.
func Detect(ctx context.Context, impl Implementation) (Implementation, string, error) {
	if impl != "" {
		return impl, "", nil
	}
	ns := fmt.Sprintf("%sprobe-%d", Prefix, os.Getpid())
	host := target.Local()
	if _, err := host.Run(ctx, "ip", "netns", "add", ns); err != nil {
		return "", "", err
	}
	defer host.Run(context.WithoutCancel(ctx), "ip", "netns", "delete", ns)
	if ok, why := KernelWireGuard(ctx, ns); !ok {
		return Userspace, why, nil
	}
	return Kernel, "the module loads here", nil
}

// HasNetem reports whether this kernel has sch_netem (loading it if it is a
// module), tried on the loopback of a throw-away namespace.
func HasNetem(ctx context.Context) bool {
	host := target.Local()
	_, _ = host.Run(ctx, "modprobe", "-q", "sch_netem")
	ns := fmt.Sprintf("%snetem-%d", Prefix, os.Getpid())
	if _, err := host.Run(ctx, "ip", "netns", "add", ns); err != nil {
		return false
	}
	defer host.Run(context.WithoutCancel(ctx), "ip", "netns", "delete", ns)
	_, err := target.Netns(ns).Run(ctx, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms")
	return err == nil
}

// chooseImplementation settles Config.WireGuard once node a's namespace
// exists: a request for kernel WireGuard fails without the module, and auto
// takes kernel where it loads.
func (l *Lab) chooseImplementation(ctx context.Context) error {
	ok, why := KernelWireGuard(ctx, l.Netns("a"))
	switch l.Config.WireGuard {
	case Kernel:
		if !ok {
			return fmt.Errorf("--wireguard kernel: %s (boot a kernel that has it: wgperf lab vm; or use --wireguard userspace)", why)
		}
	case Userspace:
	default:
		l.Config.WireGuard, l.ImplementationNote = Userspace, why
		if ok {
			l.Config.WireGuard, l.ImplementationNote = Kernel, "the module loads here"
		}
	}
	if l.Config.WireGuard == Kernel && l.Config.UDPBuffer != 0 {
		return errors.New("--udp-buffer emulates a userspace implementation's socket buffers; kernel WireGuard receives through the UDP stack's encapsulation hook and has no socket queue of its own (use --wireguard userspace)")
	}
	return nil
}

// createKernelLink makes a kernel WireGuard interface in node n's namespace.
func (l *Lab) createKernelLink(ctx context.Context, n *Node, ifname string) error {
	_, err := l.Target(n.Name).Run(ctx, "ip", "link", "add", "dev", ifname, "type", "wireguard")
	return err
}

// ImplementationText names the lab's WireGuard for people, with why it was
// chosen when the lab chose.
func (l *Lab) ImplementationText() string {
	name := "kernel module"
	if l.Config.WireGuard == Userspace {
		name = "userspace (embedded wireguard-go)"
	}
	if l.ImplementationNote != "" {
		return name + " (auto: " + l.ImplementationNote + ")"
	}
	return name
}
