#!/bin/sh
# Records each form of a rule that drops the ICMP errors of path MTU discovery:
# load it in rcptb-a, send DF pings that a narrower hop answers with "fragmentation
# needed" / "packet too big" on each path through A, save what the tools print.
#
#   B ---- A ---- C -(1400)- D      B pings D: C's errors cross A's forward hook
#          |                        A pings D: C's errors reach A's input hook
#          +-(1400)- E              B pings E: A's own errors leave through its output hook
set -u
out=$1; mkdir -p "$out"
A="ip netns exec rcptb-a"
setup() {
	for n in a b c d e; do ip netns add rcptb-$n; ip -n rcptb-$n link set dev lo up; done
	link() { # link NODE1 DEV1 NODE2 DEV2 NET MTU: NODE1 gets .1, NODE2 .2
		ip link add "$2" netns rcptb-$1 mtu "$6" type veth peer name "$4" netns rcptb-$3 mtu "$6"
		ip -n rcptb-$1 link set dev "$2" up; ip -n rcptb-$3 link set dev "$4" up
		ip -n rcptb-$1 addr add 10.$5.0.1/24 dev "$2"; ip -n rcptb-$3 addr add 10.$5.0.2/24 dev "$4"
		ip -n rcptb-$1 addr add fd$5::1/64 dev "$2" nodad; ip -n rcptb-$3 addr add fd$5::2/64 dev "$4" nodad
	}
	link a veth-a b veth-b 77 1500
	link a veth-ac c veth-c 78 1500
	link c veth-cd d veth-d 79 1400
	link a veth-ae e veth-e 80 1400
	for n in a c; do ip netns exec rcptb-$n sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1; done
	route() { # route NODE VIA4 VIA6 [DEST4 DEST6]: a default route, or one to DEST
		ip -n rcptb-$1 route add ${4:-default} via $2; ip -6 -n rcptb-$1 route add ${5:-default} via $3
	}
	route b 10.77.0.1 fd77::1; route c 10.78.0.1 fd78::1; route d 10.79.0.1 fd79::1; route e 10.80.0.1 fd80::1
	route a 10.78.0.2 fd78::2 10.79.0.0/24 fd79::/64
	sleep 2
}
probe() { # probe NODE FAMILY ADDRESS SIZE: 3 DF pings too big for a hop on the way
	ip netns exec rcptb-$1 ping $2 -n -q -M do -s $4 -c 3 -i 0.2 -W 1 $3 >/dev/null 2>&1
}
for f in "$(dirname "$0")"/*.nft "$(dirname "$0")"/*.sh; do
	name=$(basename "$f"); name=${name%.*}
	[ "$name" = record ] && continue
	setup
	case $f in
	*.nft) $A nft -f "$f" || echo "LOAD FAIL $name" ;;
	*.sh) $A sh -e "$f" || echo "LOAD FAIL $name" ;;
	esac
	probe b -4 10.80.0.2 1472; probe b -6 fd80::2 1452  # output
	probe b -4 10.79.0.2 1472; probe b -6 fd79::2 1452  # forward
	probe a -4 10.79.0.2 1472; probe a -6 fd79::2 1452  # input
	$A nft -j list ruleset > "$out/$name.nft.json"
	$A nft -a list ruleset > "$out/$name.nft.txt"
	case $f in *.sh)
		$A iptables-save -c > "$out/$name.iptables-save.txt"
		$A ip6tables-save -c > "$out/$name.ip6tables-save.txt" ;;
	esac
	echo "== $name"
	for n in a b c d e; do ip netns delete rcptb-$n; done
done
