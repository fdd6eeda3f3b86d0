#!/bin/sh
# wgperf fix plan for ssh:root@golem (OpenWrt, kernel 5.15.150).
# Review it, then run it as root on that host. Each step's rollback is in the comments below it.
set -eu

# 1. [route.stale-endpoint] remove the pinned host route to endpoint 46.38.233.77 (table main) so it follows the current default route; set network.wg.nohostroute=1
#    now: delete "46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static metric 20" from table main; network.wg.nohostroute: (unset) -> 1
#    note: restarting the interface can cut a session that runs through it: use --confirm
ip route del table main 46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static metric 20
uci set network.wg.nohostroute=1
uci commit network
ifdown wg && ifup wg
# rollback:
#   uci delete network.wg.nohostroute
#   uci commit network
#   ifdown wg && ifup wg
#   ip route replace table main 46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static metric 20

# 2. [icmp.ratelimit-drops] raise banIP's ICMP limit to 250/s so uplink health-check replies are not dropped
#    now: banip.global.ban_icmplimit: 25 -> 250
uci set banip.global.ban_icmplimit=250
uci commit banip
/etc/init.d/banip restart
# rollback:
#   uci set banip.global.ban_icmplimit=25
#   uci commit banip
#   /etc/init.d/banip restart

# 3. [mtu.tunnel-too-large] set the MTU of wg to 1412 so tunnel packets fit the narrowest underlay link
#    now: wg MTU: 1420 -> 1412
ip link set dev wg mtu 1412
uci set network.wg.mtu=1412
uci commit network
# rollback:
#   uci set network.wg.mtu=1420
#   uci commit network
#   ip link set dev wg mtu 1420

# 4. [mtu.mss-clamp-missing] clamp the MSS of TCP SYNs leaving wg to the route MTU, so PMTUD black holes cannot stall TCP
#    now: MSS clamp (pmtu) on TCP SYNs out of wg
#    note: a clamp rewrites SYNs: connections open now keep their MSS until they reconnect (new ones, the verification's too, get it)
mkdir -p /usr/share/nftables.d/ruleset-post
cat > /usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg.nft <<'WGPERF_EOF'
# Written by wgperf fix; delete this file and run: nft delete chain inet wgperf mss_wg
# fw4 includes /usr/share/nftables.d/ruleset-post/*.nft after its own table at every firewall
# start (auto_includes in /etc/config/firewall); /etc/sysupgrade.conf lists this file for sysupgrade.
table inet wgperf {
	chain mss_wg {
		type filter hook postrouting priority mangle; policy accept;
		oifname "wg" tcp flags syn / syn,rst tcp option maxseg size set rt mtu comment "wgperf mss-clamp wg pmtu"
	}
}
WGPERF_EOF
echo /usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg.nft >> /etc/sysupgrade.conf
nft -f /usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg.nft
# rollback:
#   nft delete chain inet wgperf mss_wg
#   nft list table inet wgperf | grep -q '^[[:space:]]*chain ' || nft delete table inet wgperf
#   rm -f /usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg.nft
#   restore /etc/sysupgrade.conf to its previous content:
#     - /usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg.nft

# 5. [route.stale-endpoint] uci set mwan3.wan.reliability=1 and commit, then restart mwan3
#    now: mwan3.wan.reliability: 2 -> 1
uci set mwan3.wan.reliability=1
uci commit mwan3
/etc/init.d/mwan3 restart
# rollback:
#   uci set mwan3.wan.reliability=2
#   uci commit mwan3
#   /etc/init.d/mwan3 restart

# 6. [path.port-throttled] move wg to listen port 51821, out of the path's rule for its old port (its peers' endpoints must follow)
#    now: wg listen port: 51820 -> 51821
#    note: one half of a port move: the other end's half must follow at once, or the tunnel is cut (wgperf doctor --fix applies both as one, rolled back together)
wg set wg listen-port 51821
uci set network.wg.listen_port=51821
uci commit network
# rollback:
#   uci set network.wg.listen_port=51820
#   uci commit network
#   wg set wg listen-port 51820

# 7. [path.port-throttled] point wg's peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= at 203.0.113.2:51821, where the far end now listens
#    now: wg peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint: 203.0.113.2:51820 -> 203.0.113.2:51821
#    note: one half of a port move: the other end's half must follow at once, or the tunnel is cut (wgperf doctor --fix applies both as one, rolled back together)
wg set wg peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint 203.0.113.2:51821
uci set 'network.@wireguard_wg[0].endpoint_port=51821'
uci commit network
# rollback:
#   uci set 'network.@wireguard_wg[0].endpoint_port=51820'
#   uci commit network
#   wg set wg peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= endpoint 203.0.113.2:51820

# 8. [wg.nat-no-keepalive] make wg send its peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= a keepalive every 25 s of silence, so a NAT in front of it keeps the mapping open
#    now: wg peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= persistent-keepalive: off -> 25
wg set wg peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= persistent-keepalive 25
uci set 'network.@wireguard_wg[0].persistent_keepalive=25'
uci commit network
# rollback:
#   uci delete 'network.@wireguard_wg[0].persistent_keepalive'
#   uci commit network
#   wg set wg peer sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs= persistent-keepalive off
