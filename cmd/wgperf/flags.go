package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/discover"
)

// withAddrHint names the flags that replace a tunnel discovery that failed.
func withAddrHint(err error) error {
	var nf *discover.NotFoundError
	switch {
	case !errors.As(err, &nf):
		return err
	case nf.TunnelOnly:
		return fmt.Errorf("%w: give --tunnel-addr", err)
	}
	return fmt.Errorf("%w: give --tunnel-addr and --underlay-addr", err)
}

// dropReasonsFlag is bench's and doctor's switch of the kernel drop sampler.
func dropReasonsFlag(f *pflag.FlagSet, p *bool) {
	f.BoolVar(p, "drop-reasons", true, "count the kernel's drops by reason on both ends during the bench (wgperf drops; --drop-reasons=false for counters only)")
}
