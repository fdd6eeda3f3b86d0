#!/bin/sh
# wgperf fix plan for local (Linux, kernel 6.1.0-18-amd64).
# Review it, then run it as root on that host. Each step's rollback is in the comments below it.
set -eu

# 1. [mtu.tunnel-too-large] set the MTU of wg0 to 1380 so tunnel packets fit the narrowest underlay link
#    now: wg0 MTU: 1420 -> 1380
sed -i '/^\[Interface\]/,/^\[Peer\]/{/^[[:space:]]*MTU[[:space:]]*=/d}' /etc/wireguard/wg0.conf
sed -i '/^\[Interface\]/a MTU = 1380' /etc/wireguard/wg0.conf
ip link set dev wg0 mtu 1380
# rollback:
#   ip link set dev wg0 mtu 1420
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - MTU = 1380
#     + MTU = 1420

# 2. [throughput.oscillation] cap wg0 at 150mbit with a token bucket, below the rate where throughput collapses
#    now: wg0 root qdisc: fq_codel -> tbf 150mbit
sed -i '/^\[Interface\]/,/^\[Peer\]/{/^PostUp.*root tbf/d}' /etc/wireguard/wg0.conf
sed -i '/^\[Interface\]/a PostUp = tc qdisc replace dev %i root tbf rate 150mbit burst 184kb latency 400ms' /etc/wireguard/wg0.conf
tc qdisc replace dev wg0 root tbf rate 150mbit burst 184kb latency 400ms
# rollback:
#   tc qdisc del dev wg0 root
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - PostUp = tc qdisc replace dev %i root tbf rate 150mbit burst 184kb latency 400ms

# 3. [mtu.mss-clamp-missing] clamp the MSS of TCP SYNs leaving wg0 to the route MTU, so PMTUD black holes cannot stall TCP
#    now: MSS clamp (pmtu) on TCP SYNs out of wg0
#    note: nft not found, used iptables; save the rules (iptables-save) to keep them after a reboot
#    note: a clamp rewrites SYNs: connections open now keep their MSS until they reconnect (new ones, the verification's too, get it)
iptables -t mangle -A POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu
# rollback:
#   iptables -t mangle -D POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu

# 4. [icmp.frag-needed-dropped] let ICMP frag-needed through before iptables rule "-A OUTPUT -p icmp -m icmp --icmp-type 3/4 -j DROP" (table filter), so path MTU discovery works again
#    now: accept ICMP frag-needed before rule 1 of OUTPUT (iptables -t filter)
#    note: runtime only: add the accept before the drop where the rule is defined (iptables-persistent, firewall script), or it is gone at the next firewall reload
iptables -t filter -I OUTPUT 1 -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT
# rollback:
#   iptables -t filter -D OUTPUT -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT
