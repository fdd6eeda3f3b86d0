package bench

import (
	"context"
	"strings"
	"testing"
)

// TestRunCommandRefusesBeforeMeasuring: options that cannot go together, or
// a spec that does not parse, are one line naming the flag, before any host
// is asked anything.
func TestRunCommandRefusesBeforeMeasuring(t *testing.T) {
	base := Command{ClientSpec: "local", ServerSpec: "netns:b"}
	for _, tc := range []struct {
		name string
		edit func(*Command)
		want string
	}{
		{"bad server", func(c *Command) { c.ServerSpec = "ftp:x" }, `target "ftp:x"`},
		{"negative omit", func(c *Command) { c.Omit = -1 }, "--omit, --time, --parallel, --udp and --hops must not be negative"},
		{"negative udp", func(c *Command) { c.UDPMbit = -2 }, "must not be negative"},
		{"bad client", func(c *Command) { c.ClientSpecs = []string{"netns:c1", "ssh:"} }, "--clients: "},
		{"clients and via", func(c *Command) { c.ClientSpecs, c.Via = []string{"netns:c1"}, []string{"netns:hub"} }, "it does not go with --via"},
		{"via and no underlay", func(c *Command) { c.Via, c.NoUnderlay = []string{"netns:hub"}, true }, "does not go with --no-underlay or --underlay-addr"},
		{"via and underlay addr", func(c *Command) { c.Via, c.UnderlayAddr = []string{"netns:hub"}, "192.0.2.1" }, "does not go with --no-underlay or --underlay-addr"},
	} {
		c := base
		tc.edit(&c)
		_, err := RunCommand(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}
