// Package parse reads the output of the tools and kernel files wgperf looks
// at (ip -j and BusyBox ip's text, wg show dump, /proc/net/*, nft -j,
// iptables-save, ethtool -k, conntrack -S, os-release): each ParseX takes an
// io.Reader and returns facts, is pure, table-tested on real output recorded
// into testdata/collect/ and fuzzed. Collectors (collect), probes (bench,
// mtu), discover and the lab call it; it fetches nothing.
package parse
