#!/bin/sh
# The OpenWrt pass of issue 40's boot proof, run by boot-replay.sh in the same
# guest after the Fedora/RHEL pass (bootproof_test.go says what it proves).
# $1 wgperf, $2 the repository; T0 in the environment, the Debian pass's
# start (date +%s).
#
# wgperf tells OpenWrt by /etc/openwrt_release. Neither procd nor fw4 is on
# this Debian machine, so the replay runs what they do at boot, as OpenWrt
# ships them: /etc/init.d/sysctl's start() ("for CONF in /etc/sysctl.d/*.conf
# /etc/sysctl.conf; do [ -f "$CONF" ] && sysctl -e -p "$CONF"; done", with
# BusyBox's sysctl as on the router), and the end of the ruleset fw4 renders
# at every firewall start: its own table, then an include of each file of
# /usr/share/nftables.d/ruleset-post (auto_includes' "ruleset-append").
# The boot hook is installed as the .ipk installs it and enabled as
# default_postinst enables every init script ("/etc/init.d/NAME enable"); its
# shebang names /etc/rc.common, which is not here either, so a stand-in does
# what OpenWrt's does for a script with START and start() alone: "enable"
# links /etc/rc.d/S$START$NAME to it, and procd's boot runs each rc.d S link
# in name order with "boot", which calls start().
set -u
W=$1 REPO=$2
PASS=openwrt
. "$(dirname "$0")/boot-replay-lib.sh"

step "an OpenWrt host"
printf "DISTRIB_ID='OpenWrt'\nDISTRIB_RELEASE='23.05.5'\n" > /etc/openwrt_release
rm -f /etc/sysctl.d/99-sysctl.conf # Debian's link: OpenWrt reads /etc/sysctl.conf last by itself
# base-files' defaults, with the key lower than the fix (read before 90-wgperf.conf)
printf 'net.ipv4.tcp_mtu_probing = 0\n' > /etc/sysctl.d/10-default.conf
mkdir -p /usr/share/nftables.d/ruleset-post
printf '## This file contains files and directories that should\n## be preserved during an upgrade.\n' > /etc/sysupgrade.conf
nft flush ruleset
sysctl -qw net.ipv4.tcp_mtu_probing=0 net.core.wmem_max=212992
mkdir -p /etc/rc.d /etc/init.d
cat > /etc/rc.common <<'EOF'
initscript=$1 action=$2
. "$initscript"
name=${initscript##*/}
name=${name#S[0-9][0-9]}
case $action in
enable) ln -sf "../init.d/$name" "/etc/rc.d/S$START$name" ;;
boot) start ;;
*) echo "rc.common stand-in: $action is not replayed" >&2; exit 1 ;;
esac
EOF
install -m 0755 "$W" /usr/bin/wgperf
install -m 0755 "$REPO/deploy/openwrt/wgperf-fix-rollback" /etc/init.d/
step "the boot hook enabled as default_postinst does it: /etc/init.d/wgperf-fix-rollback enable"
/etc/init.d/wgperf-fix-rollback enable 2>&1
value hook-link "$(readlink /etc/rc.d/S99wgperf-fix-rollback)"
echo '{"findings": [
{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "sysctl", "params": {"key": "net.ipv4.tcp_mtu_probing", "value": "1"}}}]},
{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "mss-clamp", "params": {"oif": "wg0", "mss": "pmtu"}}}]}]}' > /tmp/openwrt.json
step "wgperf fix --apply: net.ipv4.tcp_mtu_probing, the MSS clamp of wg0"
"$W" fix --host local --from /tmp/openwrt.json --apply 2>&1; value fix $?
echo '{"findings": [{"id": "udp.rcvbuf-errors", "severity": "warning", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "sysctl", "params": {"key": "net.core.wmem_max", "value": "26214400"}}}]}]}' > /tmp/openwrt-unconfirmed.json
step "wgperf fix --apply --confirm 10m, never confirmed: net.core.wmem_max"
"$W" fix --host local --from /tmp/openwrt-unconfirmed.json --apply --confirm 10m 2>&1; value fix-unconfirmed $?
head -n 100 /etc/sysctl.d/90-wgperf.conf /usr/share/nftables.d/ruleset-post/*.nft /etc/sysupgrade.conf 2>&1

step "the reboot: the watchdog ends, every runtime value is lost"
end_watchdogs /etc/wgperf/journal
sysctl -qw net.ipv4.tcp_mtu_probing=0 net.core.wmem_max=212992
nft flush ruleset
value reset "$(sysctl -n net.ipv4.tcp_mtu_probing) $(sysctl -n net.core.wmem_max) $(nft list ruleset | wc -l)"

step "boot replay: /etc/init.d/sysctl start (procd): /etc/sysctl.d/*.conf by name, then /etc/sysctl.conf"
for CONF in /etc/sysctl.d/*.conf /etc/sysctl.conf; do
	[ -f "$CONF" ] && busybox sysctl -e -p "$CONF" >/dev/null
done
step "boot replay: fw4 start: its table, then each ruleset-post file"
{
	printf 'table inet fw4\nflush table inet fw4\ntable inet fw4 {\n}\n'
	for f in /usr/share/nftables.d/ruleset-post/*.nft; do
		[ -f "$f" ] && printf 'include "%s"\n' "$f"
	done
} > /tmp/fw4.nft
cat /tmp/fw4.nft
nft -f /tmp/fw4.nft 2>&1
step "boot replay: procd runs each /etc/rc.d/S* with boot, in name order"
for f in /etc/rc.d/S*; do
	echo "$f boot"
	"$f" boot 2>&1
done

step "after the boot"
value tcp_mtu_probing "$(sysctl -n net.ipv4.tcp_mtu_probing)"
value mss-clamp "$(nft list table inet wgperf 2>/dev/null | grep -c 'oifname "wg0" .*maxseg size set rt mtu')"
value sysupgrade "$(grep -c '^/usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg0.nft$' /etc/sysupgrade.conf)"
value wmem_max "$(sysctl -n net.core.wmem_max)"
value wmem-files "$(grep -l wmem_max /etc/sysctl.d/*.conf 2>/dev/null | wc -l)"
