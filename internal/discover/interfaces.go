package discover

import (
	"context"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// interfacesScript lists a host's WireGuard interfaces without root and
// without wg(8): the kernel's links say DEVTYPE=wireguard, a userspace one
// (wireguard-go, boringtun) is a link with a UAPI socket of its name.
const interfacesScript = `for d in /sys/class/net/*; do n=${d##*/}; ` +
	`if grep -qx DEVTYPE=wireguard "$d/uevent" 2>/dev/null || [ -S "/var/run/wireguard/$n.sock" ]; then echo "$n"; fi; done`

// Interfaces are the WireGuard interfaces of t's network namespace, sorted:
// what "--interface" completes. A line that is not an interface name (the
// host's text) is left out.
func Interfaces(ctx context.Context, t target.Target) ([]string, error) {
	out, err := t.Run(ctx, "sh", "-c", interfacesScript)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if shell.Iface(n) == nil && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}
