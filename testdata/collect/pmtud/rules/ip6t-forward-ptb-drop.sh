ip6tables -A FORWARD -p ipv6-icmp --icmpv6-type packet-too-big -j DROP
