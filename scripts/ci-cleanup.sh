#!/bin/sh
# Removes any lab a failed test run left behind: namespaces named wgl-NAME-NODE,
# the processes in them, and their WireGuard sockets wg-NAME-NODE.sock.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^wgl-'); do
	for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
	ip netns delete "$ns" 2>/dev/null
	rm -f "/var/run/wireguard/wg-${ns#wgl-}.sock"
done
rm -rf /run/wgperf/lab
exit 0
