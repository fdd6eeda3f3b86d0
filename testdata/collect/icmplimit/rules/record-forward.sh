#!/bin/sh
# A forwards between B (10.77.0.0/24) and C (10.78.0.0/24); the limit sits in A's forward hook.
set -u
out=$1; f=$2; mkdir -p "$out"
A="ip netns exec wgicmp-a"
for n in a b c; do ip netns add wgicmp-$n; done
ip link add veth-a netns wgicmp-a type veth peer name veth-b netns wgicmp-b
ip link add veth-ac netns wgicmp-a type veth peer name veth-c netns wgicmp-c
for d in a:veth-a a:veth-ac b:veth-b c:veth-c; do ip -n wgicmp-${d%%:*} link set dev ${d#*:} up; done
for n in a b c; do ip -n wgicmp-$n link set dev lo up; done
ip -n wgicmp-a addr add 10.77.0.1/24 dev veth-a; ip -n wgicmp-b addr add 10.77.0.2/24 dev veth-b
ip -n wgicmp-a addr add 10.78.0.1/24 dev veth-ac; ip -n wgicmp-c addr add 10.78.0.2/24 dev veth-c
ip -n wgicmp-b route add default via 10.77.0.1; ip -n wgicmp-c route add default via 10.78.0.1
$A sysctl -qw net.ipv4.ip_forward=1
sleep 1
name=$(basename "$f"); name=${name%.*}
$A nft -f "$f"
ip netns exec wgicmp-b ping -n -q -c 60 -i 0.005 -W 1 10.78.0.2 | tail -2 | head -1
$A nft -j list ruleset > "$out/$name.nft.json"
$A nft -a list ruleset > "$out/$name.nft.txt"
for n in a b c; do ip netns delete wgicmp-$n; done
