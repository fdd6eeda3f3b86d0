package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// Every command that needs a tunnel, pointed at a namespace with no
// WireGuard interface, says so in one line and exits 3: doctor said
// "NOT JUDGED" and exited 0 before, fix "every fix is already in place".
func TestCommandsNeedingATunnelWithoutWireGuard(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "wg")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := fmt.Sprintf("dlv-nowg-%d", os.Getpid())
	host := target.Local()
	if out, err := host.Run(ctx, "ip", "netns", "add", name); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	defer host.Run(context.Background(), "ip", "netns", "delete", name)
	ns := "netns:" + name
	if _, err := target.Netns(name).Run(ctx, "ip", "link", "set", "dev", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"doctor", "--client", ns}, "no WireGuard interface on " + ns},
		{[]string{"doctor", "--client", ns, "--server", ns, "--json"}, "no WireGuard interface on " + ns},
		{[]string{"bench", "--client", ns, "--server", ns}, "the client has no WireGuard interface"},
		{[]string{"mtu", "--client", ns, "--server", ns}, "the client has no WireGuard interface"},
		{[]string{"shape-sweep", "--client", ns, "--server", ns}, "the client has no WireGuard interface"},
		{[]string{"fix", "--host", ns, "--root", root}, "no WireGuard interface on " + ns},
		{[]string{"fix", "--host", ns, "--root", root, "--apply", "--verify", "--server", ns}, "no WireGuard interface on " + ns},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if code != exitUnknown || out.Len() != 0 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%s: exit %d, want %d and one line with %q\nstdout: %s\nstderr: %s",
				strings.Join(tc.args, " "), code, exitUnknown, tc.want, out.String(), errOut.String())
		}
	}
}

// --interface completes the WireGuard interfaces of the host the command
// names: a lab site's tunnel (wireguard-go: a TUN link with a UAPI socket),
// and none of its other links.
func TestInterfaceCompletesTheHostsWireGuard(t *testing.T) {
	testutil.RequireRoot(t)
	l := labtest.Up(t, lab.Config{Name: "dlvcp"})
	a := l.Target("a").String()
	for _, args := range [][]string{
		{"fix", "ecmp", "--host", a, "--interface", ""},
		{"shape-sweep", "--client", a, "--interface", ""},
	} {
		var out, errOut bytes.Buffer
		run(append([]string{"__complete"}, args...), &out, &errOut)
		if got, want := out.String(), l.WGInterface("a")+"\n:4\n"; got != want {
			t.Errorf("wgperf %s<TAB>: %q, want %q (stderr %s)", strings.Join(args, " "), got, want, errOut.String())
		}
	}
}
