#!/bin/sh
# Removes any lab a failed test run left behind (labs only: namespaces named wgl-*).
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^wgl-'); do
	for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
	ip netns delete "$ns" 2>/dev/null
done
rm -f /var/run/wireguard/wg-*.sock
rm -rf /run/wgperf/lab
exit 0
