package main

import (
	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/target"
)

// viaFlag is bench's and doctor's --via: the hubs a tunnel runs through.
func viaFlag(f *pflag.FlagSet, specs *[]string) {
	f.StringArrayVar(specs, "via", nil, target.FlagHelp("a hub between the two ends (repeatable, client side first: a road-warrior hub, a multi-hop path); each hop's own underlay is measured, iperf3 between its ends, and the tunnel judged against the slowest; the hub's CPU is sampled during the tunnel runs"))
}
