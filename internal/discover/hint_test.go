package discover

import (
	"errors"
	"testing"
)

// A tunnel that cannot be found is worded with the flags of the command that
// looked: bench, mtu and shape-sweep take the addresses instead.
func TestWithAddrHint(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&NotFoundError{Reason: "the client has no WireGuard interface"}, "the client has no WireGuard interface: give --tunnel-addr and --underlay-addr"},
		{&NotFoundError{Reason: "found the server as peer of wg0, but not its tunnel address", TunnelOnly: true}, "found the server as peer of wg0, but not its tunnel address: give --tunnel-addr"},
		{errors.New("ssh: connect refused"), "ssh: connect refused"},
	} {
		if got := WithAddrHint(tc.err).Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
