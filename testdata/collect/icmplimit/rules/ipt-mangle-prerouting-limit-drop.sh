iptables -t mangle -A PREROUTING -i veth-a -p icmp -m limit --limit 10/sec --limit-burst 5 -j ACCEPT
iptables -t mangle -A PREROUTING -i veth-a -p icmp -j DROP
