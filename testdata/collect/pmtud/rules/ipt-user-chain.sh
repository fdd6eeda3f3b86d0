iptables -N icmp_guard
iptables -A icmp_guard -p icmp --icmp-type destination-unreachable -j DROP
iptables -A INPUT -p icmp -j icmp_guard
