package diagnose

import (
	"errors"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func TestRequireWireGuard(t *testing.T) {
	withWG := &facts.Snapshot{Host: targettest.Spec("ssh:a"), WireGuard: []facts.WGInterface{{Name: "wg0"}}}
	without := &facts.Snapshot{Host: targettest.Spec("ssh:b")}
	noTool := &facts.Snapshot{Host: targettest.Spec("ssh:c"), Notes: []facts.Note{{Source: "ethtool -k", Message: "ethtool not installed"}, {Source: "wg show", Message: "wg not installed"}}}
	for _, tc := range []struct {
		snaps []*facts.Snapshot
		want  string // "" for no error
	}{
		{[]*facts.Snapshot{withWG}, ""},
		{nil, ""},
		{[]*facts.Snapshot{withWG, without}, "no WireGuard interface on ssh:b: there is no tunnel to judge"},
		{[]*facts.Snapshot{noTool, without}, "no WireGuard interface on ssh:c (wg show: wg not installed): there is no tunnel to judge"},
	} {
		err := RequireWireGuard(tc.snaps)
		var nw *NoWireGuardError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d hosts: %v, want nil", len(tc.snaps), err)
		case tc.want != "" && (!errors.As(err, &nw) || err.Error() != tc.want):
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
