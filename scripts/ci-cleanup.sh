#!/bin/sh
# Removes what a failed or timed-out test run left behind (a test killed by
# go test -timeout runs no cleanups): lab namespaces wgl-NAME-NODE with their
# processes and WireGuard sockets wg-NAME-NODE.sock, the namespaces the root
# tests make themselves (wgf- fix, wgb-it- iperf, wgc- collect), and any
# kernel guest (lab vm) still running: each one's process group is noted in
# /run/wgperf/guests, and only those groups are ended.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^(wgl|wgf|wgb-it|wgc)-'); do
	for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
	ip netns delete "$ns" 2>/dev/null
	case "$ns" in wgl-*) rm -f "/var/run/wireguard/wg-${ns#wgl-}.sock" ;; esac
done
for note in /run/wgperf/guests/*; do
	pgid=${note##*/}
	case "$pgid" in *[!0-9]* | "") continue ;; esac
	if kill -0 -- "-$pgid" 2>/dev/null; then
		echo "ci-cleanup: ending a guest left running (process group $pgid)" >&2
		kill -9 -- "-$pgid" 2>/dev/null
	fi
	rm -f "$note"
done
rm -rf /run/wgperf/lab
exit 0
