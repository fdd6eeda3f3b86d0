iptables -A OUTPUT -p icmp --icmp-type fragmentation-needed -j DROP
