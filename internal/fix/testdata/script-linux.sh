#!/bin/sh
# wgperf fix plan for ssh:root@gw (Linux, kernel 4.19.0-27-amd64).
# Review it, then run it as root on that host. Each step's rollback is in the comments below it.
set -eu

# 1. [udp.rcvbuf-errors] set net.core.rmem_max = 26214400 now and at boot (in /etc/sysctl.d: the plan names the file, or says runtime only)
#    now: net.core.rmem_max: 212992 -> 26214400
#    note: re-opens the UDP socket of userspace WireGuard wg0 (port 51820, 416 KiB now) so the running tunnel gets the new limit (a limit reaches only sockets opened after it); peers, sessions and the port stay
#    note: persists: /etc/sysctl.d/99-wgperf.conf, not 90-wgperf.conf: /etc/sysctl.d/99-sysctl.conf sets net.core.rmem_max = 212992 after it, and 99-wgperf.conf sorts after that file, so systemd-sysctl.service sets 26214400 last at boot
mkdir -p /etc/sysctl.d
cat > /etc/sysctl.d/99-wgperf.conf <<'WGPERF_EOF'
# Written by wgperf fix; remove a line (or this file) to undo at next boot.
# Keys a file that sorts after 90-wgperf.conf sets otherwise (sysctl.d(5): the last assignment wins).
net.core.rmem_max = 26214400
WGPERF_EOF
sysctl -w net.core.rmem_max=26214400
wg set wg0 listen-port 51820
# rollback:
#   sysctl -w net.core.rmem_max=212992
#   wg set wg0 listen-port 51820
#   rm -f /etc/sysctl.d/99-wgperf.conf

# 2. [tcp.buffers-small] set net.ipv4.tcp_rmem = 4096 131072 67108864 now and at boot (in /etc/sysctl.d: the plan names the file, or says runtime only)
#    now: net.ipv4.tcp_rmem: 4096 131072 33554432 -> 4096 131072 67108864
#    note: persists: /etc/sysctl.d/90-wgperf.conf sets net.ipv4.tcp_rmem last of the 4 sysctl files systemd-sysctl.service reads at boot (sysctl.d(5): by file name across /etc, /run, /usr/local/lib, /usr/lib and /lib/sysctl.d; the last assignment wins)
mkdir -p /etc/sysctl.d
cat > /etc/sysctl.d/90-wgperf.conf <<'WGPERF_EOF'
# Written by wgperf fix; remove a line (or this file) to undo at next boot.
net.core.netdev_max_backlog = 5000
net.ipv4.tcp_rmem = 4096 131072 67108864
WGPERF_EOF
sysctl -w 'net.ipv4.tcp_rmem=4096 131072 67108864'
# rollback:
#   sysctl -w 'net.ipv4.tcp_rmem=4096 131072 33554432'
#   restore /etc/sysctl.d/90-wgperf.conf to its previous content:
#     - net.ipv4.tcp_rmem = 4096 131072 67108864

# 3. [net.backlog-drops] set net.core.netdev_max_backlog = 5000 now and at boot (in /etc/sysctl.d: the plan names the file, or says runtime only)
#    now: net.core.netdev_max_backlog: 5000 -> 5000
#    already in place, nothing to do

# 4. [tcp.congestion-control] use bbr congestion control (fq as default qdisc on kernels before 4.20)
#    now: net.ipv4.tcp_congestion_control: cubic -> bbr; net.core.default_qdisc: pfifo_fast -> fq (kernel 4.19.0-27-amd64 < 4.20)
#    note: loads module tcp_bbr (left loaded on rollback)
#    note: persists: /etc/sysctl.d/90-wgperf.conf sets net.ipv4.tcp_congestion_control last of the 4 sysctl files systemd-sysctl.service reads at boot (sysctl.d(5): by file name across /etc, /run, /usr/local/lib, /usr/lib and /lib/sysctl.d; the last assignment wins)
#    note: persists: /etc/sysctl.d/90-wgperf.conf sets net.core.default_qdisc last of the 4 sysctl files systemd-sysctl.service reads at boot (sysctl.d(5): by file name across /etc, /run, /usr/local/lib, /usr/lib and /lib/sysctl.d; the last assignment wins)
#    note: net.core.default_qdisc reaches only qdiscs created after it: the sending interface keeps its root qdisc until it is re-created (tc qdisc replace dev DEV root fq gives it fq now)
#    note: connections open now keep their congestion control until they reconnect; new ones (the verification's too) use bbr
mkdir -p /etc/sysctl.d
cat > /etc/sysctl.d/90-wgperf.conf <<'WGPERF_EOF'
# Written by wgperf fix; remove a line (or this file) to undo at next boot.
net.core.netdev_max_backlog = 5000
net.ipv4.tcp_rmem = 4096 131072 67108864
net.ipv4.tcp_congestion_control = bbr
net.core.default_qdisc = fq
WGPERF_EOF
modprobe tcp_bbr
sysctl -w net.ipv4.tcp_congestion_control=bbr
sysctl -w net.core.default_qdisc=fq
# rollback:
#   sysctl -w net.core.default_qdisc=pfifo_fast
#   sysctl -w net.ipv4.tcp_congestion_control=cubic
#   restore /etc/sysctl.d/90-wgperf.conf to its previous content:
#     - net.ipv4.tcp_congestion_control = bbr
#     - net.core.default_qdisc = fq

# 5. [mtu.mss-clamp-missing] clamp the MSS of TCP SYNs leaving wg0 to the route MTU, so PMTUD black holes cannot stall TCP
#    now: MSS clamp (pmtu) on TCP SYNs out of wg0
#    note: persists: nftables.service is enabled and runs nft -f /etc/nftables.conf at boot, which includes /etc/wgperf/nft/*.nft
#    note: a clamp rewrites SYNs: connections open now keep their MSS until they reconnect (new ones, the verification's too, get it)
mkdir -p /etc/wgperf/nft
cat > /etc/wgperf/nft/mss_wg0.nft <<'WGPERF_EOF'
# Written by wgperf fix; delete this file and run: nft delete chain inet wgperf mss_wg0
table inet wgperf {
	chain mss_wg0 {
		type filter hook postrouting priority mangle; policy accept;
		oifname "wg0" tcp flags syn / syn,rst tcp option maxseg size set rt mtu comment "wgperf mss-clamp wg0 pmtu"
	}
}
WGPERF_EOF
printf '\n# wgperf fix: its own table\n%s\n' 'include "/etc/wgperf/nft/*.nft"' >> /etc/nftables.conf
nft -f /etc/wgperf/nft/mss_wg0.nft
# rollback:
#   nft delete chain inet wgperf mss_wg0
#   nft list table inet wgperf | grep -q '^[[:space:]]*chain ' || nft delete table inet wgperf
#   rm -f /etc/wgperf/nft/mss_wg0.nft
#   restore /etc/nftables.conf to its previous content:
#     - # wgperf fix: its own table
#     - include "/etc/wgperf/nft/*.nft"

# 6. [conntrack.tunnel-tracked] stop connection tracking for traffic in wg0 and its UDP port 51820
#    now: NOTRACK for wg0 and udp port 51820
#    note: persists: nftables.service is enabled and runs nft -f /etc/nftables.conf at boot, which includes /etc/wgperf/nft/*.nft
mkdir -p /etc/wgperf/nft
cat > /etc/wgperf/nft/notrack_wg0_in.nft <<'WGPERF_EOF'
# Written by wgperf fix; delete this file and run: nft delete chain inet wgperf notrack_wg0_in
table inet wgperf {
	chain notrack_wg0_in {
		type filter hook prerouting priority raw; policy accept;
		iifname "wg0" notrack comment "wgperf notrack wg0 51820"
		udp dport 51820 notrack comment "wgperf notrack wg0 51820"
	}
}
WGPERF_EOF
mkdir -p /etc/wgperf/nft
cat > /etc/wgperf/nft/notrack_wg0_out.nft <<'WGPERF_EOF'
# Written by wgperf fix; delete this file and run: nft delete chain inet wgperf notrack_wg0_out
table inet wgperf {
	chain notrack_wg0_out {
		type filter hook output priority raw; policy accept;
		oifname "wg0" notrack comment "wgperf notrack wg0 51820"
		udp sport 51820 notrack comment "wgperf notrack wg0 51820"
	}
}
WGPERF_EOF
nft -f /etc/wgperf/nft/notrack_wg0_in.nft
nft -f /etc/wgperf/nft/notrack_wg0_out.nft
# rollback:
#   nft delete chain inet wgperf notrack_wg0_out
#   nft list table inet wgperf | grep -q '^[[:space:]]*chain ' || nft delete table inet wgperf
#   nft delete chain inet wgperf notrack_wg0_in
#   nft list table inet wgperf | grep -q '^[[:space:]]*chain ' || nft delete table inet wgperf
#   rm -f /etc/wgperf/nft/notrack_wg0_in.nft
#   rm -f /etc/wgperf/nft/notrack_wg0_out.nft

# 7. [route.stale-endpoint] remove the pinned host route to endpoint 46.38.233.77 (table main) so it follows the current default route
#    now: delete "46.38.233.77 via 192.168.253.254 dev eth1 proto static metric 20" from table main
#    note: if the interface routes all traffic (AllowedIPs 0.0.0.0/0 without fwmark rules), the host route prevents a loop: keep one via the current uplink instead
ip route del table main 46.38.233.77 via 192.168.253.254 dev eth1 proto static metric 20
# rollback:
#   ip route replace table main 46.38.233.77 via 192.168.253.254 dev eth1 proto static metric 20

# 8. [icmp.ratelimit-drops] raise the ICMP rate limit of nft rule inet banIP pre-routing handle 4 to 250/s so health-check replies are not dropped
#    now: ICMP limit 25/s -> 250/s, burst 25 (inet banIP pre-routing handle 4)
#    note: runtime only: also raise the rate where the rule is defined, or it returns at the next firewall reload
nft 'replace rule inet banIP pre-routing handle 4 iifname "eth1" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 250/second burst 25 packets counter name "cnt_icmpflood" drop'
# rollback:
#   nft 'replace rule inet banIP pre-routing handle 4 iifname "eth1" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 25/second counter name "cnt_icmpflood" drop'

# 9. [cpu.softirq-imbalance] spread receive processing of eth1 over CPUs 3 (RPS) so one core does not take every packet
#    now: eth1 rps_cpus: rx-0=0 -> 3
#    note: runtime only: re-apply at boot (OpenWrt: uci set network.globals.packet_steering=1)
echo 3 > /sys/class/net/eth1/queues/rx-0/rps_cpus
# rollback:
#   echo 0 > /sys/class/net/eth1/queues/rx-0/rps_cpus

# 10. [bond.hash-policy] set xmit_hash_policy of bond0 to layer3+4 so flows spread over all bond links
#    now: bond0 xmit_hash_policy: layer2 -> layer3+4
#    note: runtime only: also set it where the bond is configured (e.g. bond-xmit-hash-policy in /etc/network/interfaces)
echo layer3+4 > /sys/class/net/bond0/bonding/xmit_hash_policy
# rollback:
#   echo layer2 > /sys/class/net/bond0/bonding/xmit_hash_policy

# 11. [throughput.collapse-knee] cap eth1 at 150mbit with a token bucket, below the rate where throughput collapses
#    now: eth1 root qdisc: tbf rate 200Mbit burst 262125b lat 50ms -> tbf 150mbit
#    note: runtime only: re-apply when eth1 comes up (e.g. a PostUp line or hotplug script)
tc qdisc replace dev eth1 root tbf rate 150mbit burst 184kb latency 400ms
# rollback:
#   tc qdisc replace dev eth1 root tbf rate 200Mbit burst 262125b lat 50ms

# 12. [latency.bufferbloat] shape eth0's egress at 18mbit with cake (or htb + fq_codel), so the queue forms where it is kept short
#    now: eth0 root qdisc: fq_codel -> cake bandwidth 18mbit
#    note: runtime only: re-apply when eth0 comes up (systemd-networkd's [CAKE] section, or a hook of the tool that configures it)
tc qdisc replace dev eth0 root cake bandwidth 18mbit
# rollback:
#   tc qdisc del dev eth0 root

# 13. [icmp.frag-needed-dropped] let ICMP frag-needed through before nft rule inet site out handle 2, so path MTU discovery works again
#    now: accept ICMP frag-needed before inet site out handle 2
#    note: runtime only: add the accept before the drop where your firewall configuration defines it, or it is gone at the next firewall reload
nft 'insert rule inet site out position 2 icmp type destination-unreachable icmp code frag-needed accept comment "wgperf pmtud"'
# rollback:
#   for h in $(nft -a list chain inet site out | sed -n 's/.*comment "wgperf pmtud" # handle \([0-9][0-9]*\)$/\1/p'); do nft delete rule inet site out handle "$h"; done

# 14. [net.udp-offloads] set eth1's offloads: rx-udp-gro-forwarding on, rx-gro-list off
#    now: eth1 offloads: rx-udp-gro-forwarding off, rx-gro-list off
#    note: runtime only: add the ethtool line to eth1's post-up hook, or it is gone when the device comes up again
ethtool -K eth1 rx-udp-gro-forwarding on
# rollback:
#   ethtool -K eth1 rx-udp-gro-forwarding off

# 15. [cpu.irq-imbalance] move interrupt 39 (virtio2-output.0) to CPUs 1 so one CPU does not take every interrupt of the NIC
#    now: interrupt 39 (virtio2-output.0) CPUs: 0-1 -> 1
#    note: runtime only, and irqbalance (where it runs) may move it back: ban it there (IRQBALANCE_ARGS=--banirq=39)
echo 1 > /proc/irq/39/smp_affinity_list
# rollback:
#   echo 0-1 > /proc/irq/39/smp_affinity_list

# 16. [conntrack.table-pressure] resize the connection-tracking hash to 65536 buckets now and when nf_conntrack loads at boot (/etc/modprobe.d/90-wgperf.conf)
#    now: nf_conntrack hash: 16384 -> 65536 buckets
#    note: kept where nf_conntrack is a module (modprobe.d); a kernel with it built in needs nf_conntrack.hashsize=65536 on its command line
mkdir -p /etc/modprobe.d
cat > /etc/modprobe.d/90-wgperf.conf <<'WGPERF_EOF'
# Written by wgperf fix; remove a line (or this file) to undo at next boot.
options nf_conntrack hashsize=65536
WGPERF_EOF
echo 65536 > /sys/module/nf_conntrack/parameters/hashsize
# rollback:
#   echo 16384 > /sys/module/nf_conntrack/parameters/hashsize
#   rm -f /etc/modprobe.d/90-wgperf.conf
