#!/bin/sh
# Records each ICMP-limit form: load it in wgicmp-a, ping bursts both ways, save outputs.
set -u
out=$1; mkdir -p "$out"
A="ip netns exec wgicmp-a"; B="ip netns exec wgicmp-b"
ip netns add wgicmp-a; ip netns add wgicmp-b
ip link add veth-a netns wgicmp-a type veth peer name veth-b netns wgicmp-b
for n in a b; do ip -n wgicmp-$n link set dev lo up; ip -n wgicmp-$n link set dev veth-$n up; done
ip -n wgicmp-a addr add 10.77.0.1/24 dev veth-a; ip -n wgicmp-b addr add 10.77.0.2/24 dev veth-b
ip -n wgicmp-a addr add fd77::1/64 dev veth-a nodad; ip -n wgicmp-b addr add fd77::2/64 dev veth-b nodad
sleep 1
for f in rules/*; do
	name=$(basename "$f"); name=${name%.*}
	$A nft flush ruleset; $A iptables -P INPUT ACCEPT; $A ip6tables -P INPUT ACCEPT 2>/dev/null
	$A nft flush ruleset
	case $f in
	*.nft) $A nft -f "$f" || { echo "LOAD FAIL $name"; continue; } ;;
	*.sh) $A sh -e "$f" || { echo "LOAD FAIL $name"; continue; } ;;
	esac
	$A ping -n -q -c 60 -i 0.005 -W 1 10.77.0.2 | tail -2 | head -1
	$B ping -n -q -c 60 -i 0.005 -W 1 10.77.0.1 | tail -2 | head -1
	$A ping -n -q -c 60 -i 0.005 -W 1 fd77::2 | tail -2 | head -1
	$A nft -j list ruleset > "$out/$name.nft.json"
	$A nft -a list ruleset > "$out/$name.nft.txt"
	case $f in *.sh)
		$A iptables-save -c > "$out/$name.iptables-save.txt"
		$A ip6tables-save -c > "$out/$name.ip6tables-save.txt" ;;
	esac
	echo "== $name"
done
ip netns delete wgicmp-a; ip netns delete wgicmp-b
