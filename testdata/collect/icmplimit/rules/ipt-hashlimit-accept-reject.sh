iptables -A INPUT -p icmp -m hashlimit --hashlimit-upto 10/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmp -j ACCEPT
iptables -A INPUT -p icmp -j REJECT --reject-with icmp-host-prohibited
