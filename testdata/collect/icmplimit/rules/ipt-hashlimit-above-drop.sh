iptables -A INPUT -p icmp -m hashlimit --hashlimit-above 10/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name icmpflood -j DROP
