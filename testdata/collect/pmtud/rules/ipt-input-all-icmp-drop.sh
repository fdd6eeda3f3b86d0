iptables -A INPUT -p icmp -j DROP
