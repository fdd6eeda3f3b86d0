ip6tables -A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type echo-reply -m limit --limit 10/sec --limit-burst 5 -j ACCEPT
ip6tables -A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type echo-reply -j DROP
