package scenario

import (
	"context"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// nodeWithHostSysctls is a lab node as the host it stands for: everything
// runs in the node's namespace except the writes of the sysctls that a child
// namespace only mirrors (net.core.rmem_max, nf_conntrack_max: the scenario's
// HostSysctls), which go to the initial namespace, where a real host would
// set them. So a fix runs where it would on one host: the sysctl reaches the
// machine, and what the remedy does beside it (re-opening the node's
// WireGuard socket, a notrack rule) reaches the node. Run restores those
// sysctls afterwards.
type nodeWithHostSysctls struct {
	target.Target
	host    target.Target
	mirrors map[string]bool // sysctl keys set in the initial namespace
}

// Run sends "sh -c 'sysctl -w KEY=VALUE'" to the host for a mirrored key,
// exactly as the remedy wrote it, and "sysctl -n KEY" reads of one (some,
// like net.core.netdev_max_backlog, are not even mirrored: a child namespace
// has no file for them); everything else runs on the node.
func (n nodeWithHostSysctls) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if name == "sh" && len(args) == 2 && args[0] == "-c" && n.mirrored(args[1]) {
		return n.host.Run(ctx, name, args...)
	}
	if name == "sysctl" && len(args) == 2 && args[0] == "-n" && n.mirrors[args[1]] {
		return n.host.Run(ctx, name, args...)
	}
	return n.Target.Run(ctx, name, args...)
}

// mirrored reports whether line is one sysctl write of a mirrored key.
func (n nodeWithHostSysctls) mirrored(line string) bool {
	rest, ok := strings.CutPrefix(line, "sysctl -w ")
	if !ok {
		return false
	}
	key, value, ok := strings.Cut(rest, "=")
	// The remedy quotes the whole KEY=VALUE word when the value holds spaces:
	// only a plain word is one this target routes.
	return ok && n.mirrors[key] && shell.Join("sysctl", "-w", key+"="+value) == line
}
