#!/bin/sh
# wgperf fix plan for local (Linux, kernel 6.1.0-18-amd64).
# Review it, then run it as root on that host. Each step's rollback is in the comments below it.
set -eu

# 1. [path.port-throttled] move wg0 to listen port 51821, out of the path's rule for its old port (its peers' endpoints must follow)
#    now: wg0 listen port: 51820 -> 51821
#    note: one half of a port move: the other end's half must follow at once, or the tunnel is cut (wgperf doctor --fix applies both as one, rolled back together)
awk -v 'sec=[interface]' -v pk= -v k=listenport -v 'l=ListenPort = 51821' 'FNR == 1 { s = 0 }
/^[[:space:]]*\[/ { s++; h = tolower($0); gsub(/[[:space:]]/, "", h) }
NR == FNR {
  if (h == sec && t == 0 && pk == "") t = s
  if (h == sec && pk != "" && tolower($0) ~ /^[[:space:]]*publickey[[:space:]]*=/) { v = $0; sub(/^[^=]*=[[:space:]]*/, "", v); sub(/[[:space:]]+$/, "", v); if (v == pk) t = s }
  if (tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=") has[s] = 1
  next
}
s == t && tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=" { print l; next }
{ print }
s == t && /^[[:space:]]*\[/ && !has[t] { print l }' /etc/wireguard/wg0.conf /etc/wireguard/wg0.conf > /etc/wireguard/wg0.conf.wgperf && cat /etc/wireguard/wg0.conf.wgperf > /etc/wireguard/wg0.conf && rm -f /etc/wireguard/wg0.conf.wgperf
wg set wg0 listen-port 51821
# rollback:
#   wg set wg0 listen-port 51820
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - ListenPort = 51821
#     + ListenPort = 51820

# 2. [path.port-throttled] point wg0's peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= at 203.0.113.2:51821, where the far end now listens
#    now: wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint: 203.0.113.2:51820 -> 203.0.113.2:51821
#    note: one half of a port move: the other end's half must follow at once, or the tunnel is cut (wgperf doctor --fix applies both as one, rolled back together)
awk -v 'sec=[peer]' -v pk=sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= -v k=endpoint -v 'l=Endpoint = 203.0.113.2:51821' 'FNR == 1 { s = 0 }
/^[[:space:]]*\[/ { s++; h = tolower($0); gsub(/[[:space:]]/, "", h) }
NR == FNR {
  if (h == sec && t == 0 && pk == "") t = s
  if (h == sec && pk != "" && tolower($0) ~ /^[[:space:]]*publickey[[:space:]]*=/) { v = $0; sub(/^[^=]*=[[:space:]]*/, "", v); sub(/[[:space:]]+$/, "", v); if (v == pk) t = s }
  if (tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=") has[s] = 1
  next
}
s == t && tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=" { print l; next }
{ print }
s == t && /^[[:space:]]*\[/ && !has[t] { print l }' /etc/wireguard/wg0.conf /etc/wireguard/wg0.conf > /etc/wireguard/wg0.conf.wgperf && cat /etc/wireguard/wg0.conf.wgperf > /etc/wireguard/wg0.conf && rm -f /etc/wireguard/wg0.conf.wgperf
wg set wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint 203.0.113.2:51821
# rollback:
#   wg set wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint 203.0.113.2:51820
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - Endpoint = 203.0.113.2:51821
#     + Endpoint = 203.0.113.2:51820

# 3. [mtu.tunnel-too-large] set the MTU of wg0 to 1380 so tunnel packets fit the narrowest underlay link
#    now: wg0 MTU: 1420 -> 1380
sed -i '/^\[Interface\]/,/^\[Peer\]/{/^[[:space:]]*MTU[[:space:]]*=/d}' /etc/wireguard/wg0.conf
sed -i '/^\[Interface\]/a MTU = 1380' /etc/wireguard/wg0.conf
ip link set dev wg0 mtu 1380
# rollback:
#   ip link set dev wg0 mtu 1420
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - MTU = 1380
#     + MTU = 1420

# 4. [path.port-throttled] move wg0 to listen port 51821 and point its peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= at 203.0.113.2:51821, where the far end now listens: both ends off the throttled port
#    now: wg0 listen port: 51820 -> 51821; wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint: 203.0.113.2:51820 -> 203.0.113.2:51821
#    note: one half of a port move: the other end's half must follow at once, or the tunnel is cut (wgperf doctor --fix applies both as one, rolled back together)
wg set wg0 listen-port 51821
wg set wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint 203.0.113.2:51821
# rollback:
#   wg set wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint 203.0.113.2:51820
#   wg set wg0 listen-port 51820

# 5. [wg.nat-no-keepalive] make wg0 send its peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= a keepalive every 25 s of silence, so a NAT in front of it keeps the mapping open
#    now: wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= persistent-keepalive: off -> 25
awk -v 'sec=[peer]' -v pk=sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= -v k=persistentkeepalive -v 'l=PersistentKeepalive = 25' 'FNR == 1 { s = 0 }
/^[[:space:]]*\[/ { s++; h = tolower($0); gsub(/[[:space:]]/, "", h) }
NR == FNR {
  if (h == sec && t == 0 && pk == "") t = s
  if (h == sec && pk != "" && tolower($0) ~ /^[[:space:]]*publickey[[:space:]]*=/) { v = $0; sub(/^[^=]*=[[:space:]]*/, "", v); sub(/[[:space:]]+$/, "", v); if (v == pk) t = s }
  if (tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=") has[s] = 1
  next
}
s == t && tolower($0) ~ "^[[:space:]]*" k "[[:space:]]*=" { print l; next }
{ print }
s == t && /^[[:space:]]*\[/ && !has[t] { print l }' /etc/wireguard/wg0.conf /etc/wireguard/wg0.conf > /etc/wireguard/wg0.conf.wgperf && cat /etc/wireguard/wg0.conf.wgperf > /etc/wireguard/wg0.conf && rm -f /etc/wireguard/wg0.conf.wgperf
wg set wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= persistent-keepalive 25
# rollback:
#   wg set wg0 peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= persistent-keepalive off
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - PersistentKeepalive = 25

# 6. [throughput.collapse-knee] cap wg0 at 150mbit with a token bucket, below the rate where throughput collapses
#    now: wg0 root qdisc: fq_codel -> tbf 150mbit
sed -i '/^\[Interface\]/,/^\[Peer\]/{/^PostUp.*root tbf/d}' /etc/wireguard/wg0.conf
sed -i '/^\[Interface\]/a PostUp = tc qdisc replace dev %i root tbf rate 150mbit burst 184kb latency 400ms' /etc/wireguard/wg0.conf
tc qdisc replace dev wg0 root tbf rate 150mbit burst 184kb latency 400ms
# rollback:
#   tc qdisc del dev wg0 root
#   restore /etc/wireguard/wg0.conf to its previous content:
#     - PostUp = tc qdisc replace dev %i root tbf rate 150mbit burst 184kb latency 400ms

# 7. [mtu.mss-clamp-missing] clamp the MSS of TCP SYNs leaving wg0 to the route MTU, so PMTUD black holes cannot stall TCP
#    now: MSS clamp (pmtu) on TCP SYNs out of wg0
#    note: persists: netfilter-persistent.service (iptables-persistent) is enabled and restores /etc/iptables/rules.v4 at boot
#    note: a clamp rewrites SYNs: connections open now keep their MSS until they reconnect (new ones, the verification's too, get it)
mkdir -p /etc/iptables
cat > /etc/iptables/rules.v4 <<'WGPERF_EOF'
# Generated by iptables-save v1.8.9
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
COMMIT
*mangle
-A POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu
COMMIT
WGPERF_EOF
iptables -t mangle -A POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu
# rollback:
#   iptables -t mangle -D POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu
#   restore /etc/iptables/rules.v4 to its previous content:
#     - *mangle
#     - -A POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu

# 8. [icmp.frag-needed-dropped] let ICMP frag-needed through before iptables rule "-A OUTPUT -p icmp -m icmp --icmp-type 3/4 -j DROP" (table filter), so path MTU discovery works again
#    now: accept ICMP frag-needed before rule 1 of OUTPUT (iptables -t filter)
#    note: runtime only: add the accept before the drop where the rule is defined (iptables-persistent, firewall script), or it is gone at the next firewall reload
iptables -t filter -I OUTPUT 1 -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT
# rollback:
#   iptables -t filter -D OUTPUT -p icmp -m icmp --icmp-type fragmentation-needed -m comment --comment 'wgperf pmtud' -j ACCEPT

# 9. [route.ecmp-suggested] spread wg-e37-a's flows over 2 tunnels to the same peer (wg-e37-a, wg-e37-a1), with a multipath route hashing on ports
#    now: wg-e37-a: 1 tunnel -> 2 (wg-e37-a, wg-e37-a1), ports 51820..51821, routing 10.20.0.0/16 over all of them
#    note: the new tunnels' private keys are derived on this host from wg-e37-a's and never leave it; their peers are the other end's new tunnels, whose half goes with this one (wgperf fix ecmp --server applies both, rolled back together)
#    note: runtime only: a restart of the host or of wg-e37-a drops the new tunnels; keep them in wg-quick configs (wgperf fix ecmp without --server prints them)
ip link add dev wg-e37-a1 type wireguard
ip address add 10.77.1.1/24 dev wg-e37-a1
wg show wg-e37-a private-key | { read -r k && printf '%s wgperf-ecmp-1' "$k" | sha256sum; } | { read -r h _ && b= && while [ -n "$h" ]; do t=${h#??}; b="$b\\$(printf %03o "0x${h%"$t"}")"; h=$t; done && printf "$b" | base64; } | wg set wg-e37-a1 listen-port 51821 private-key /dev/stdin peer 3VmR7PSHrDkAhmTMaC7TLTAYh9sZMcmjDXcUK8OWDHA= endpoint 203.0.113.2:51821 persistent-keepalive 25 allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32
ip link set dev wg-e37-a1 mtu 1420 up
wg set wg-e37-a peer YG+cE2Ndc+xBtuyWRpDyQ/BwjAEKYJNxOsEbQ4DE0lg= allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32
sysctl -qw net.ipv4.fib_multipath_hash_policy=1
ip route replace 10.20.0.0/16 nexthop dev wg-e37-a weight 1 nexthop dev wg-e37-a1 weight 1
# rollback:
#   ip route replace 10.20.0.0/16 dev wg-e37-a
#   sysctl -qw net.ipv4.fib_multipath_hash_policy=0
#   wg set wg-e37-a peer YG+cE2Ndc+xBtuyWRpDyQ/BwjAEKYJNxOsEbQ4DE0lg= allowed-ips 10.77.0.2/32,10.20.0.0/16
#   ip link del dev wg-e37-a1
