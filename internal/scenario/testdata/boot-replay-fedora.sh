#!/bin/sh
# The Fedora/RHEL pass of issue 40's boot proof, run by boot-replay.sh in the
# same guest after the Debian pass (bootproof_test.go says what it proves).
# $1 wgperf, $2 the repository;
# T0 in the environment, the Debian pass's start (date +%s).
#
# The guest is this Debian machine, so the Fedora packages' files that wgperf
# and the boot read are written here as those packages ship them: nftables'
# unit (ExecStart=/sbin/nft -f /etc/sysconfig/nftables.conf) and its
# sysconfig file, iptables-services' unit and its saved rules, and
# fedora-release's "disable *" preset. wgperf tells this layout by what is on
# the host: /etc/sysconfig/nftables.conf for nftables.service's file, an
# enabled iptables.service for /etc/sysconfig/iptables.
set -u
W=$1 REPO=$2
PASS=fedora
. "$(dirname "$0")/boot-replay-lib.sh"

step "a Fedora/RHEL host with systemd"
systemctl disable nftables.service wgperf-fix-rollback.service 2>&1
rm -f /etc/nftables.conf
# nftables' unit and file, as Fedora's nftables package ships them
cat > /lib/systemd/system/nftables.service <<'EOF'
[Unit]
Description=Netfilter Tables
Documentation=man:nft(8)
Wants=network-pre.target
Before=network-pre.target

[Service]
Type=oneshot
ProtectSystem=full
ProtectHome=true
ExecStart=/sbin/nft -f /etc/sysconfig/nftables.conf
ExecReload=/sbin/nft 'flush ruleset; include "/etc/sysconfig/nftables.conf";'
ExecStop=/sbin/nft flush ruleset
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
EOF
mkdir -p /etc/sysconfig
cat > /etc/sysconfig/nftables.conf <<'EOF'
# Uncomment the include statement here to load the default config sample
# in /etc/nftables for nftables service.

#include "/etc/nftables/main.nft"
EOF
systemctl enable nftables.service 2>&1
# iptables-services' unit (its ExecStart, /usr/libexec/iptables/iptables.init
# start, is not on this machine: the replay below runs what it does) and
# saved rules
cat > /lib/systemd/system/iptables.service <<'EOF'
[Unit]
Description=IPv4 firewall with iptables
AssertPathExists=/etc/sysconfig/iptables
Before=network-pre.target
Wants=network-pre.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/libexec/iptables/iptables.init start
ExecReload=/usr/libexec/iptables/iptables.init reload
ExecStop=/usr/libexec/iptables/iptables.init stop
Environment=BOOTUP=serial
Environment=CONSOLETYPE=serial

[Install]
WantedBy=multi-user.target
EOF
printf '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n' > /etc/sysconfig/iptables
systemctl enable iptables.service 2>&1
# the boot hook: the .rpm installs its preset, and its %post runs
# "systemctl preset" on a first install ("1"); fedora-release's lowest
# preset disables every unit no other preset names
install -m 0644 "$REPO/packaging/systemd/90-wgperf.preset" /usr/lib/systemd/system-preset/
printf 'disable *\n' > /usr/lib/systemd/system-preset/99-default-disable.preset
sh "$REPO/packaging/scripts/rpm/post" 1
# (the hook itself is the Debian pass's: enabled, it runs the same at boot)
value hook-enabled "$(systemctl is-enabled wgperf-fix-rollback.service 2>&1)"
value nftables-enabled "$(systemctl is-enabled nftables.service 2>&1)"
value iptables-enabled "$(systemctl is-enabled iptables.service 2>&1)"

finding() { # kind, params
	echo '{"findings": [{"id": "'"$1"'", "severity": "warning", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "'"$2"'", "params": '"$3"'}}]}]}'
}
finding mtu.pmtud-blackhole mss-clamp '{"oif": "wg1", "mss": "pmtu"}' > /tmp/fedora-nft.json
finding mtu.pmtud-blackhole mss-clamp '{"oif": "wg0", "mss": "pmtu"}' > /tmp/fedora-ipt.json
step "wgperf fix --apply: the MSS clamp of wg1 (nft)"
"$W" fix --host local --from /tmp/fedora-nft.json --apply 2>&1; value fix-nft $?
step "wgperf fix --apply on a host without nft (RHEL 7's iptables-services): the MSS clamp of wg0 (iptables)"
mv /usr/sbin/nft /usr/sbin/nft.away
"$W" fix --host local --from /tmp/fedora-ipt.json --apply 2>&1; value fix-iptables $?
mv /usr/sbin/nft.away /usr/sbin/nft
head -n 100 /etc/sysconfig/nftables.conf /etc/sysconfig/iptables 2>&1

step "the reboot: every runtime value is lost"
nft flush ruleset # iptables here is iptables-nft: its tables go too
value reset "$(nft list ruleset | wc -l)"

step "boot replay: nftables.service, when enabled"
if systemctl -q is-enabled nftables.service; then
	start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/nftables.service)
	echo "$start"; $start 2>&1
fi
step "boot replay: iptables.service, when enabled: iptables.init start restores /etc/sysconfig/iptables"
if systemctl -q is-enabled iptables.service; then
	iptables-restore /etc/sysconfig/iptables 2>&1
fi

step "after the boot"
value nft-clamp "$(nft list table inet wgperf 2>/dev/null | grep -c 'oifname "wg1" .*maxseg size set rt mtu')"
value iptables-clamp "$(iptables -t mangle -S POSTROUTING 2>/dev/null | grep -c -- '-o wg0 .*TCPMSS --clamp-mss-to-pmtu')"

# Debian/Ubuntu without nftables.service: iptables-persistent's
# netfilter-persistent.service restores /etc/iptables/rules.v4 at boot (its
# ExecStart, /usr/sbin/netfilter-persistent start, runs the 15-ip4tables
# plugin: iptables-restore < /etc/iptables/rules.v4). The package is not on
# this machine: its unit is written as Debian ships it, and the replay runs
# what the plugin does.
step "Debian with iptables-persistent: netfilter-persistent.service enabled, rules.v4"
systemctl disable iptables.service nftables.service 2>&1
cat > /lib/systemd/system/netfilter-persistent.service <<'EOF2'
[Unit]
Description=netfilter persistent configuration
DefaultDependencies=no
Wants=network-pre.target systemd-modules-load.service local-fs.target
Before=network-pre.target shutdown.target
After=systemd-modules-load.service local-fs.target
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/sbin/netfilter-persistent start
ExecStop=/usr/sbin/netfilter-persistent stop

[Install]
WantedBy=multi-user.target
EOF2
mkdir -p /etc/iptables
printf '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n' > /etc/iptables/rules.v4
systemctl enable netfilter-persistent.service 2>&1
echo "value debian-netfilter-persistent-enabled $(systemctl is-enabled netfilter-persistent.service 2>&1)"
iptables -t mangle -F POSTROUTING 2>&1
step "wgperf fix --apply on a host without nft: the MSS clamp of wg0 (iptables)"
mv /usr/sbin/nft /usr/sbin/nft.away
"$W" fix --host local --from /tmp/fedora-ipt.json --apply 2>&1; echo "value debian-fix-iptables $?"
mv /usr/sbin/nft.away /usr/sbin/nft
cat /etc/iptables/rules.v4
step "the reboot: every runtime value is lost"
nft flush ruleset
step "boot replay: netfilter-persistent.service, when enabled: its 15-ip4tables plugin restores /etc/iptables/rules.v4"
if systemctl -q is-enabled netfilter-persistent.service; then
	iptables-restore < /etc/iptables/rules.v4 2>&1
fi
echo "value debian-iptables-clamp $(iptables -t mangle -S POSTROUTING 2>/dev/null | grep -c -- '-o wg0 .*TCPMSS --clamp-mss-to-pmtu')"
