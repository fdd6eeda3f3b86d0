#!/bin/sh
# The OpenWrt pass of issue 40's boot proof, run by boot-replay.sh in the same
# guest after the Fedora/RHEL pass (bootproof_test.go says what it proves).
# $1 wgperf; T0 in the environment, the Debian pass's start (date +%s).
#
# wgperf tells OpenWrt by /etc/openwrt_release. Neither procd nor fw4 is on
# this Debian machine, so the replay runs what they do at boot, as OpenWrt
# ships them: /etc/init.d/sysctl's start() ("for CONF in /etc/sysctl.d/*.conf
# /etc/sysctl.conf; do [ -f "$CONF" ] && sysctl -e -p "$CONF"; done", with
# BusyBox's sysctl as on the router), and the end of the ruleset fw4 renders
# at every firewall start: its own table, then an include of each file of
# /usr/share/nftables.d/ruleset-post (auto_includes' "ruleset-append").
set -u
W=$1
step() { echo "--- [$(($(date +%s) - T0)) s] openwrt: $*"; }
value() { echo "value openwrt-$1 $2"; }

step "an OpenWrt host"
printf "DISTRIB_ID='OpenWrt'\nDISTRIB_RELEASE='23.05.5'\n" > /etc/openwrt_release
rm -f /etc/sysctl.d/99-sysctl.conf # Debian's link: OpenWrt reads /etc/sysctl.conf last by itself
# base-files' defaults, with the key lower than the fix (read before 90-wgperf.conf)
printf 'net.ipv4.tcp_mtu_probing = 0\n' > /etc/sysctl.d/10-default.conf
mkdir -p /usr/share/nftables.d/ruleset-post
printf '## This file contains files and directories that should\n## be preserved during an upgrade.\n' > /etc/sysupgrade.conf
nft flush ruleset
sysctl -qw net.ipv4.tcp_mtu_probing=0
echo '{"findings": [
{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "sysctl", "params": {"key": "net.ipv4.tcp_mtu_probing", "value": "1"}}}]},
{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "mss-clamp", "params": {"oif": "wg0", "mss": "pmtu"}}}]}]}' > /tmp/openwrt.json
step "wgperf fix --apply: net.ipv4.tcp_mtu_probing, the MSS clamp of wg0"
"$W" fix --host local --from /tmp/openwrt.json --apply 2>&1; value fix $?
head -n 100 /etc/sysctl.d/90-wgperf.conf /usr/share/nftables.d/ruleset-post/*.nft /etc/sysupgrade.conf 2>&1

step "the reboot: every runtime value is lost"
sysctl -qw net.ipv4.tcp_mtu_probing=0
nft flush ruleset
value reset "$(sysctl -n net.ipv4.tcp_mtu_probing) $(nft list ruleset | wc -l)"

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

step "after the boot"
value tcp_mtu_probing "$(sysctl -n net.ipv4.tcp_mtu_probing)"
value mss-clamp "$(nft list table inet wgperf 2>/dev/null | grep -c 'oifname "wg0" .*maxseg size set rt mtu')"
value sysupgrade "$(grep -c '^/usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg0.nft$' /etc/sysupgrade.conf)"
