package scenario

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A lab node stands for a whole host: the sysctls its namespace only mirrors
// are written on the machine, and everything else the fix runs (re-opening
// the node's WireGuard socket) runs on the node.
func TestNodeWithHostSysctls(t *testing.T) {
	node, host := targettest.New("netns:wgl-x-b"), targettest.New("local")
	for _, h := range []*targettest.Host{node, host} {
		h.Fallback = func(string) (targettest.Answer, bool) { return targettest.Answer{}, true }
	}
	n := nodeWithHostSysctls{Target: node, host: host, mirrors: map[string]bool{"net.core.rmem_max": true}}
	ctx := context.Background()
	for _, line := range []string{
		"sysctl -w net.core.rmem_max=26214400",   // the machine's
		"sysctl -w net.core.rmem_max=32768",      // its undo: the machine's
		"wg set wg-x-b listen-port 51820",        // the node's socket
		"sysctl -w net.core.wmem_max=26214400",   // not one the scenario set: the node's
		"sysctl -w net.core.rmem_max=1; reboot",  // not one sysctl write
		"sysctl -n net.core.rmem_max",            // a read: the node mirrors it
		"sysctl -w net.core.rmem_max=26214400 x", // more than one word
	} {
		if _, err := n.Run(ctx, "sh", "-c", line); err != nil {
			t.Fatal(err)
		}
	}
	// A direct read of a key the scenario set is the machine's (a child
	// namespace has no net.core.netdev_max_backlog at all); others the node's.
	for _, key := range []string{"net.core.rmem_max", "net.core.wmem_max"} {
		if _, err := n.Run(ctx, "sysctl", "-n", key); err != nil {
			t.Fatal(err)
		}
	}
	sh := func(lines ...string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, shell.Join("sh", "-c", l))
		}
		return out
	}
	if d := cmp.Diff(append(sh("sysctl -w net.core.rmem_max=26214400", "sysctl -w net.core.rmem_max=32768"), "sysctl -n net.core.rmem_max"), host.Ran()); d != "" {
		t.Errorf("on the machine (-want +got)\n%s", d)
	}
	if d := cmp.Diff(append(sh("wg set wg-x-b listen-port 51820", "sysctl -w net.core.wmem_max=26214400", "sysctl -w net.core.rmem_max=1; reboot",
		"sysctl -n net.core.rmem_max", "sysctl -w net.core.rmem_max=26214400 x"), "sysctl -n net.core.wmem_max"), node.Ran()); d != "" {
		t.Errorf("on the node (-want +got)\n%s", d)
	}
}
