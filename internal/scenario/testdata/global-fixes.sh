#!/bin/sh
# The proof of the fixes of the machine's own sysctls (issue 51), run in the
# kernel guest by TestKernelGlobalFixesRollBack: the conntrack hash and
# net.core.dev_weight exist in the initial network namespace only (a child
# namespace has no dev_weight and sees nf_conntrack_buckets read-only), so a
# root test on this machine would change its own values. $1 is wgperf.
set -u
W=$1
value() { echo "value $1 $2"; }
modprobe nf_conntrack
# dev_weight lowered below its default: the evidence net.backlog-drops fixes
sysctl -qw net.core.dev_weight=16
b0=$(cat /sys/module/nf_conntrack/parameters/hashsize)
b1=$((b0 * 4))
value dev_weight-before "$(sysctl -n net.core.dev_weight)"
value buckets-before "$b0"
finding() { # id, kind, params
	echo '{"id": "'"$1"'", "severity": "warning", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "'"$2"'", "params": '"$3"'}}]}'
}
buckets=$(finding conntrack.table-pressure conntrack-buckets '{"buckets": "'$b1'"}')
weight=$(finding net.backlog-drops sysctl '{"key": "net.core.dev_weight", "value": "64"}')
echo '{"findings": ['"$buckets,$weight"']}' > /tmp/global.json
echo '{"findings": ['"$buckets"']}' > /tmp/buckets.json
"$W" fix --host local --from /tmp/global.json --apply 2>&1; value fix $?
value dev_weight-applied "$(sysctl -n net.core.dev_weight)"
value buckets-applied "$(cat /sys/module/nf_conntrack/parameters/hashsize)"
value buckets-sysctl "$(sysctl -n net.netfilter.nf_conntrack_buckets)"
value modprobe-conf "$(tail -n 1 /etc/modprobe.d/90-wgperf.conf)"
value sysctl-conf "$(grep -h dev_weight /etc/sysctl.d/*wgperf*.conf)"
"$W" fix rollback --host local 2>&1; value rollback $?
value dev_weight-after "$(sysctl -n net.core.dev_weight)"
value buckets-after "$(cat /sys/module/nf_conntrack/parameters/hashsize)"
value modprobe-conf-after "$([ -e /etc/modprobe.d/90-wgperf.conf ] && echo present || echo absent)"
value sysctl-conf-after "$(cat /etc/sysctl.d/*wgperf*.conf 2>/dev/null | grep -c dev_weight)"
# A child namespace: the plan refuses the machine's hash, and nothing changes.
ip netns add gfx
"$W" fix --host netns:gfx --from /tmp/buckets.json --apply 2>&1; value netns-fix $?
value buckets-netns "$(cat /sys/module/nf_conntrack/parameters/hashsize)"
ip netns del gfx
