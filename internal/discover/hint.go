package discover

import (
	"errors"
	"fmt"
)

// WithAddrHint names the flags that replace a tunnel discovery that failed:
// bench, mtu and shape-sweep take the addresses as --tunnel-addr and
// --underlay-addr.
func WithAddrHint(err error) error {
	var nf *NotFoundError
	switch {
	case !errors.As(err, &nf):
		return err
	case nf.TunnelOnly:
		return fmt.Errorf("%w: give --tunnel-addr", err)
	}
	return fmt.Errorf("%w: give --tunnel-addr and --underlay-addr", err)
}
