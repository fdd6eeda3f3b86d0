package diagnose

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
)

// TestCommandCheck: diagnose's flags are checked, one line naming the flag,
// and defaulted before anything is collected: this machine when nothing is
// named, ANSIBLE_INVENTORY's sources where --limit or --list-hosts needs an
// inventory and none was named.
func TestCommandCheck(t *testing.T) {
	ok := Command{Severity: "warning", Options: Options{Concurrency: 4, HostTimeout: time.Second}}
	c := ok
	t.Setenv("ANSIBLE_INVENTORY", "")
	if err := c.Check(); err != nil || !slices.Equal(c.Hosts, []string{"local"}) || c.MinSeverity != finding.Warning {
		t.Errorf("nothing named: %v, hosts %v, severity %v; want local, warning", err, c.Hosts, c.MinSeverity)
	}
	for _, tc := range []struct {
		edit func(*Command)
		want string
	}{
		{func(c *Command) { c.Severity = "loud" }, "--severity: "},
		{func(c *Command) { c.Options.Check.PathRTT = -time.Second }, "--rate and --rtt must not be negative"},
		{func(c *Command) { c.Options.Concurrency = 0 }, "--concurrency must be at least 1"},
		{func(c *Command) { c.Options.HostTimeout = 0 }, "--concurrency must be at least 1 and --host-timeout positive"},
		{func(c *Command) { c.Options.Limit = "routers" }, "--limit selects hosts of an --inventory"},
		{func(c *Command) { c.ListHosts = true }, "--list-hosts lists the hosts of an --inventory"},
	} {
		c := ok
		tc.edit(&c)
		if err := c.Check(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", c, err, tc.want)
		}
	}
	t.Setenv("ANSIBLE_INVENTORY", "a.ini, b.yml")
	c = ok
	c.Options.Limit = "routers"
	if err := c.Check(); err != nil || !slices.Equal(c.Inventory, []string{"a.ini", "b.yml"}) || len(c.Hosts) != 0 {
		t.Errorf("--limit with ANSIBLE_INVENTORY: %v, inventory %v, hosts %v", err, c.Inventory, c.Hosts)
	}
}
