package shaping

import (
	"context"
	"strings"
	"testing"
)

// TestRunCommandRefusesBeforeSweeping: a hold too short without --short, an
// unknown --prefer and a cap that is not a rate are one line naming the
// flag, before the hosts are asked anything.
func TestRunCommandRefusesBeforeSweeping(t *testing.T) {
	ok := Command{ClientSpec: "netns:hc-a", ServerSpec: "netns:hc-b", PreferName: string(PreferSteady), Config: Config{Seconds: FullHoldSeconds}}
	for _, tc := range []struct {
		edit func(*Command)
		want string
	}{
		{func(c *Command) { c.ServerSpec = "ftp:x" }, `target "ftp:x"`},
		{func(c *Command) { c.Seconds = 10 }, "--time 10 is shorter than 60 s: add --short"},
		{func(c *Command) { c.PreferName = "fastest" }, "fastest"},
		{func(c *Command) { c.Caps = []int{150, 0} }, "--caps: 0 is not a positive rate in Mbit/s"},
	} {
		c := ok
		tc.edit(&c)
		if _, err := RunCommand(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", c, err, tc.want)
		}
	}
}
