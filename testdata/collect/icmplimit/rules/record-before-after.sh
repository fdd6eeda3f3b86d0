#!/bin/sh
# Before/after counters of one form around a ping burst, for the icmp-burst probe.
set -u
out=$1; mkdir -p "$out"
A="ip netns exec wgicmp-a"
ip netns add wgicmp-a; ip netns add wgicmp-b
ip link add veth-a netns wgicmp-a type veth peer name veth-b netns wgicmp-b
for n in a b; do ip -n wgicmp-$n link set dev lo up; ip -n wgicmp-$n link set dev veth-$n up; done
ip -n wgicmp-a addr add 10.77.0.1/24 dev veth-a; ip -n wgicmp-b addr add 10.77.0.2/24 dev veth-b
sleep 1
for f in rules/ipt-limit-accept-policy.sh rules/nft-accept-then-drop.nft; do
	name=$(basename "$f"); name=${name%.*}
	$A nft flush ruleset; $A iptables -P INPUT ACCEPT; $A nft flush ruleset
	case $f in *.nft) $A nft -f "$f" ;; *.sh) $A sh -e "$f" ;; esac
	for s in before after; do
		if [ $s = after ]; then $A ping -n -q -c 40 -i 0.005 -W 1 10.77.0.2 | tail -2 | head -1; fi
		$A nft -j list ruleset > "$out/$name-$s.nft.json"
		case $f in *.sh) $A iptables-save -c > "$out/$name-$s.iptables-save.txt" ;; esac
	done
done
ip netns delete wgicmp-a; ip netns delete wgicmp-b
