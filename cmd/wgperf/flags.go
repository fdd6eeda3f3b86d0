package main

import (
	"github.com/spf13/pflag"
)

// dropReasonsFlag is bench's and doctor's switch of the kernel drop sampler.
func dropReasonsFlag(f *pflag.FlagSet, p *bool) {
	f.BoolVar(p, "drop-reasons", true, "count the kernel's drops by reason on both ends during the bench (wgperf drops; --drop-reasons=false for counters only)")
}
