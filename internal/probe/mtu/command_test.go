package mtu

import (
	"context"
	"strings"
	"testing"
)

// TestRunCommandRefusesBeforeProbing: options that cannot go together, and
// a search with nowhere to probe, are one line naming the flag before any
// probe is sent.
func TestRunCommandRefusesBeforeProbing(t *testing.T) {
	for _, tc := range []struct {
		c    Command
		want string
	}{
		{Command{ClientSpec: "ftp:x"}, `target "ftp:x"`},
		{Command{ClientSpec: "local", Capture: true, HTML: true}, "--html is not available with --capture"},
		{Command{ClientSpec: "local", Capture: true}, "--capture needs --server"},
		{Command{ClientSpec: "local"}, "give --server (to find its endpoint address) or --addr"},
		{Command{ClientSpec: "local", Config: Config{Addr: "192.0.2.1", Min: 1500, Max: 1400}}, "--min and --max must be positive, with --min <= --max"},
		{Command{ClientSpec: "local", Config: Config{Addr: "192.0.2.1", Max: -1}}, "--min and --max must be positive"},
	} {
		res, captured, err := RunCommand(context.Background(), tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || res != nil || captured != nil {
			t.Errorf("%+v: %v, want %q and no result", tc.c, err, tc.want)
		}
	}
}
