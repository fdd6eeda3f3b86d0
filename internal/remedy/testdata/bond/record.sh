#!/bin/sh
# Records which slave a bond hashing layer3+4 sends a UDP flow by, for port
# pairs like ECMP tunnels' (run in the kernel guest, which has the bonding
# driver: wgperf lab vm -- sh record.sh > hash-6.1.txt). A: bond0
# (balance-xor: the 802.3ad transmit hash without a LACP partner) over N veth
# slaves to a bridge on R. Each line: slaves N src S dst D ports P Q slave I.
set -u
modprobe bonding
for n in 2 3 4; do
	ip netns add bha; ip netns add bhr
	ip -n bha link add bond0 type bond mode balance-xor xmit_hash_policy layer3+4
	ip -n bhr link add br0 type bridge
	for i in $(seq $n); do
		ip link add s$i netns bha type veth peer name r$i netns bhr
		ip -n bha link set s$i master bond0
		ip -n bhr link set r$i master br0
		ip -n bhr link set r$i up
	done
	ip -n bhr link set br0 up; ip -n bhr addr add 203.0.113.2/24 dev br0
	ip -n bha link set bond0 up; ip -n bha addr add 198.51.100.2/24 dev bond0
	ip -n bha route add default dev bond0
	ip -n bhr route add default dev br0
	sleep 1
	for pair in "51820 51820" "51821 51821" "51822 51822" "51823 51823" "51821 51820" "51822 51820" "51823 51820" \
		"51820 51822" "51821 51824" "51822 51826" "51823 51828" "51900 51820" "51901 51821" "5000 5000" "5001 5001" "5002 5002"; do
		set -- $pair
		before=$(for i in $(seq $n); do cat /sys/class/net/s$i/statistics/tx_packets 2>/dev/null || ip netns exec bha cat /sys/class/net/s$i/statistics/tx_packets; done)
		ip netns exec bha python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('198.51.100.2', $1))
for i in range(20): s.sendto(b'x' * 100, ('203.0.113.2', $2))
"
		i=0; got=
		for b in $before; do
			i=$((i+1))
			a=$(ip netns exec bha cat /sys/class/net/s$i/statistics/tx_packets)
			[ $((a-b)) -ge 20 ] && got=$((i-1))
		done
		echo "slaves $n src 198.51.100.2 dst 203.0.113.2 ports $1 $2 slave $got"
	done
	ip netns del bha; ip netns del bhr
done
