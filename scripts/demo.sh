#!/bin/sh
# The README's first command: diagnose and fix two real cases on the built-in
# lab — a PMTUD black hole between two sites, and a multi-WAN router's
# WireGuard endpoint route stuck on the backup uplink — then print the
# before/after table. With "kernel", it plays them on kernel WireGuard in a
# guest kernel that has the module (wgperf lab vm), with the case only the
# kernel module has (a path that loses fragments), and writes
# wgperf-demo-kernel.html.
set -eu
bin="${1:-bin/wgperf}"
if [ "$(id -u)" -ne 0 ]; then
	echo "make demo needs root for network namespaces: sudo make demo" >&2
	exit 1
fi
if [ "${2:-}" = kernel ]; then
	exec "$bin" lab vm --rwdir "$PWD" -- "$bin" lab run pmtud-blackhole stale-endpoint-route fragments-dropped --html wgperf-demo-kernel.html
fi
exec "$bin" lab run pmtud-blackhole stale-endpoint-route --html wgperf-demo.html
