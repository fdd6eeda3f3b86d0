iptables -A INPUT -p icmp -m icmp --icmp-type echo-reply -m limit --limit 10/sec --limit-burst 5 -j ACCEPT
iptables -A INPUT -p icmp -m icmp --icmp-type echo-reply -j DROP
