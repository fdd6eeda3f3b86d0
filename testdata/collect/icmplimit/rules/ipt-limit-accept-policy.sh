iptables -A INPUT -i lo -j ACCEPT
iptables -A INPUT -p icmp -m limit --limit 10/sec --limit-burst 5 -j ACCEPT
iptables -P INPUT DROP
