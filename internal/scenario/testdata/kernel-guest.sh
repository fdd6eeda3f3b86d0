#!/bin/sh
# The kernel lane's one guest (TestKernelGuest, kernelguest_test.go): its
# parts one after the other, each announced by a line "wgperf-part NAME" on
# standard output for the test to judge apart.
#   boot-proof    boot-replay.sh (bootproof_test.go says what it proves)
#   global-fixes  global-fixes.sh (globalfix_test.go)
#   reset         what the two parts changed in the guest's kernel, put
#                 back (each played in a mount namespace of its own, so its
#                 files went with it): the catalog judges doctor on the
#                 guest's own values
#   gate          the wait for the host lane to end (scripts/test.sh): the
#                 catalog judges throughput, so nothing may run beside it
#   catalog       one "lab run" per scenario (kernel_test.go's catalogLoop)
# $1 wgperf, $2 the repository, $3 the boot hook's arguments after "wgperf",
# $4 a folder the host writes (--rwdir) where the file "open" opens the gate,
# $5 the catalog's loop, $6 to $9 boot-replay.sh, its Fedora and OpenWrt
# passes and global-fixes.sh; the scenarios follow.
set -u
W=$1 REPO=$2 HOOK=$3 GATE=$4 LOOP=$5 BOOT=$6 FEDORA=$7 OPENWRT=$8 GLOBAL=$9
shift 9
part() { echo "wgperf-part $1"; }
# the guest's own state, as the catalog should find it: the network sysctls
# of the initial namespace (child namespaces start from some of them), its
# links, its firewall, its modules (conntrack, which the global fixes load,
# would track every packet of the catalog's labs) and its processes
net_sysctls() { sysctl -a 2>/dev/null | grep -E '^net\.(core|ipv4|ipv6)\.' | grep -v -E '^net\.ipv[46]\.(conf|neigh)\.'; }
net_sysctls >/tmp/kernel-guest-sysctls
links() { ip -o link show | sed 's/^[0-9]*: \([^:@]*\).*/\1/' | sort; }
links >/tmp/kernel-guest-links
# the writable ones among the lines of the first snapshot that no longer hold
changed() {
	net_sysctls | grep -v -x -F -f - /tmp/kernel-guest-sysctls | while IFS= read -r l; do
		k=${l%% = *}
		[ -w "/proc/sys/$(echo "$k" | tr . /)" ] && echo "$l"
	done
}
modules() { awk '{print $1}' /proc/modules | sort; }
modules >/tmp/kernel-guest-modules
# processes, kernel threads (no command line) left out
procs() { for p in /proc/[0-9]*; do [ -s "$p/cmdline" ] && echo "${p#/proc/}"; done | sort; }
procs >/tmp/kernel-guest-procs

# isolated runs a part in a mount namespace of its own where /etc, /usr and
# /var are throw-away overlays and /run/systemd an empty tmpfs: the files it
# writes go with it (the boot proof's /etc/openwrt_release would make the
# guest OpenWrt to wgperf, its /run/systemd/system a systemd host, for the
# parts after it).
isolated() {
	mkdir -p /tmp/kernel-guest-ns /run/systemd
	unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs /tmp/kernel-guest-ns && mount -t tmpfs tmpfs /run/systemd || exit 1
		for d in /etc /usr /var; do
			u=/tmp/kernel-guest-ns$d
			mkdir -p "$u/upper" "$u/work"
			mount -t overlay overlay -o "lowerdir=$d,upperdir=$u/upper,workdir=$u/work" "$d" || exit 1
		done
		exec "$@"' - "$@"
}

part boot-proof
isolated env SYSTEMD_OFFLINE=1 sh "$BOOT" "$W" "$REPO" "$HOOK" "$FEDORA" "$OPENWRT"

part global-fixes
isolated sh "$GLOBAL" "$W"

part reset
# what the parts left running (a confirm watchdog would roll its fix back
# during the catalog), this shell's own children (the listing's) aside
procs | comm -13 /tmp/kernel-guest-procs - | while read -r p; do
	[ "$(cut -d' ' -f4 "/proc/$p/stat" 2>/dev/null)" = "$$" ] && continue
	c=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) && kill -9 "$p" 2>/dev/null && echo "ended $p: $c"
done
links | comm -13 /tmp/kernel-guest-links - | while read -r l; do
	ip link del "$l" && echo "deleted link $l"
done
nft flush ruleset 2>&1
for t in filter mangle nat raw; do iptables -t "$t" -F 2>/dev/null; iptables -t "$t" -X 2>/dev/null; done
changed | while IFS= read -r l; do
	sysctl -q -w "${l%% = *}=${l#* = }" 2>&1 && echo "restored $l"
done
# the modules the parts loaded, users first: a few rounds
for i in 1 2 3; do
	modules | comm -13 /tmp/kernel-guest-modules - | while read -r m; do
		modprobe -r "$m" 2>/dev/null && echo "unloaded $m"
	done
done
echo "value links $(links | comm -3 /tmp/kernel-guest-links - | wc -l)"
echo "value nft-rules $(nft list ruleset 2>/dev/null | grep -c .)"
echo "value sysctls $(changed | wc -l)"
# what the parts wrote that would change the host wgperf sees
echo "value files $(ls -d /etc/openwrt_release /run/systemd/system /etc/systemd/network/50-wg0.netdev /etc/wireguard/wg1.conf 2>/dev/null | wc -l)"
echo "value modules $(modules | comm -13 /tmp/kernel-guest-modules - | tr '\n' ' ')"

part gate
n=0
while [ ! -e "$GATE/open" ]; do
	sleep 1
	n=$((n + 1))
	# the guest's silence watchdog hears it wait
	[ $((n % 30)) -ne 0 ] || echo "waiting for the host lane to end ($n s)"
done
echo "the gate opened after $n s"

part catalog
sh -c "$LOOP" - "$W" "$@"
