#!/bin/sh
# Usage: record-invalid.sh nft|ipt SNAPSHOT.json (root, from the repository, after make build);
# it wrote testdata/snapshots/lab-ctinvalid-{nft,ipt}-b.json.
# Records a conntrack "invalid" drop: B drops ct state invalid and does not pick up
# connections it has no entry for (tcp_loose=0); its table is flushed mid-transfer.
set -u
form=$1 out=$2   # form: nft or ipt
W=${WGPERF:-bin/wgperf}
$W lab up --name rc7 >/dev/null 2>&1
L="$W lab exec --name rc7"
$L b -- sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0
$L b -- nft 'add table inet filter; add chain inet filter input { type filter hook input priority 0; policy accept; }; add rule inet filter input ct state established,related counter accept'
case $form in
nft) $L b -- nft 'insert rule inet filter input ct state invalid counter drop' ;;
ipt) $L b -- iptables -A INPUT -m conntrack --ctstate INVALID -j DROP ;;
esac
$L b -- iperf3 -s -1 -D -I /run/rc7-iperf.pid
sleep 0.5
$L a -- timeout 8 iperf3 -c 10.77.0.2 -t 4 >/dev/null 2>&1 &
sleep 1.5
$L b -- conntrack -F 2>/dev/null
wait
$W collect --host netns:wgl-rc7-b -o "$out"
[ -f /run/rc7-iperf.pid ] && kill "$(cat /run/rc7-iperf.pid)" 2>/dev/null; rm -f /run/rc7-iperf.pid
$W lab down --name rc7 >/dev/null
