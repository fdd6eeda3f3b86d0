#!/bin/sh
# drops-overhead.sh: what the kernel drop sampler costs a bench. In one lab,
# wgperf bench runs ROUNDS times with the sampler and without it, in turns
# (so both see the same machine), and the tunnel's mean rate with it is
# compared to the mean without: the ratio should stay at or above 0.98.
#
#   scripts/drops-overhead.sh [LAB-NAME]      (root; ROUNDS=4 WGPERF=bin/wgperf)
set -eu
name=${1:-drov}
rounds=${ROUNDS:-4}
wgperf=${WGPERF:-bin/wgperf}
"$wgperf" lab up --name "$name" >/dev/null
trap '"$wgperf" lab down --name "$name" >/dev/null' EXIT INT TERM
a=netns:wgl-$name-a
b=netns:wgl-$name-b
with=0
without=0
i=0
while [ "$i" -lt "$rounds" ]; do
	for sampler in true false; do
		# bench's table: PATH DIRECTION STREAMS MBIT/S ...; the tunnel rows, both ways.
		rate=$("$wgperf" bench --client "$a" --server "$b" --quick --no-underlay --drop-reasons="$sampler" |
			awk '$1 == "tunnel" { sum += $4 } END { print sum / 2 }')
		echo "round $((i + 1)) sampler=$sampler: tunnel $rate Mbit/s (mean of upload and download)"
		if [ "$sampler" = true ]; then
			with=$(awk -v s="$with" -v r="$rate" 'BEGIN { print s + r }')
		else
			without=$(awk -v s="$without" -v r="$rate" 'BEGIN { print s + r }')
		fi
	done
	i=$((i + 1))
done
awk -v w="$with" -v wo="$without" -v n="$rounds" 'BEGIN {
	printf "with the sampler %.1f Mbit/s, without %.1f Mbit/s: ratio %.3f (at least 0.98 wanted)\n", w / n, wo / n, w / wo
	exit (w / wo < 0.98)
}'
