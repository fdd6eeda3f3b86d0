#!/bin/sh
# The boot proof of issue 40, run in the kernel guest by TestKernelFixesOutlastBoot
# (bootproof_test.go says what it does).
# $1 wgperf, $2 the repository, $3 the boot hook's arguments after "wgperf",
# $4 the Fedora/RHEL pass (boot-replay-fedora.sh), run after this one, $5 the
# OpenWrt pass (boot-replay-openwrt.sh), run after that.
set -u
W=$1 REPO=$2 HOOK=$3 FEDORA=$4 OPENWRT=$5
T0=$(date +%s)
PASS=
. "$(dirname "$0")/boot-replay-lib.sh"
step "a Debian host with systemd"
mkdir -p /run/systemd/system /etc/systemd/network /var/lib/wgperf
[ -e /etc/sysctl.d/99-sysctl.conf ] || ln -s ../sysctl.conf /etc/sysctl.d/99-sysctl.conf
printf '\n# planted by the boot proof: lower than the fix, read after 90-*.conf\nnet.core.rmem_max = 212992\n' >> /etc/sysctl.conf
sysctl -qw net.core.rmem_max=212992 net.core.wmem_max=212992
systemctl enable nftables.service 2>&1
install -m 0644 "$REPO/deploy/systemd/wgperf-fix-rollback.service" /lib/systemd/system/
# as dpkg runs it (deb-systemd-helper refuses to run outside a maintainer script)
DPKG_MAINTSCRIPT_PACKAGE=wgperf DPKG_MAINTSCRIPT_NAME=postinst sh "$REPO/packaging/scripts/deb/postinst" configure
value hook-enabled "$(systemctl is-enabled wgperf-fix-rollback.service 2>&1)"
value nftables-enabled "$(systemctl is-enabled nftables.service 2>&1)"
wg genkey > /etc/systemd/network/wg0.key
chown root:systemd-network /etc/systemd/network/wg0.key
chmod 0640 /etc/systemd/network/wg0.key
cat > /etc/systemd/network/50-wg0.netdev <<'EOF'
[NetDev]
Name=wg0
Kind=wireguard
MTUBytes=1420

[WireGuard]
PrivateKeyFile=/etc/systemd/network/wg0.key
ListenPort=51820
EOF
ip link add dev wg0 type wireguard && ip link set dev wg0 mtu 1420 up
wg set wg0 private-key /etc/systemd/network/wg0.key listen-port 51820
# wg1: a tunnel wg-quick makes at boot (wg-quick@wg1 enabled), MTU left to
# wg-quick (1420 here: no default route, so 1500 - 80)
mkdir -p /etc/wireguard
(umask 077 && printf '[Interface]\nPrivateKey = %s\nListenPort = 51821\n' "$(wg genkey)" > /etc/wireguard/wg1.conf)
systemctl enable wg-quick@wg1.service 2>&1
value wgquick-enabled "$(systemctl is-enabled wg-quick@wg1.service 2>&1)"
wg-quick up wg1 2>&1
# wg2: a tunnel NetworkManager makes from its keyfile at boot, when it is
# installed (make deps does not install it). NetworkManager runs here without
# systemd as PID 1, on a system bus of its own, managing wg2 alone.
NM=
if command -v NetworkManager >/dev/null 2>&1; then
	NM=1
	mkdir -p /run/dbus /run/NetworkManager /var/lib/NetworkManager
	dbus=$(dbus-daemon --system --fork --print-pid)
	printf '[main]\nplugins=keyfile\nno-auto-default=*\n[keyfile]\nunmanaged-devices=*,except:interface-name:wg2\n' > /etc/NetworkManager/conf.d/90-bootproof.conf
	nm_start() {
		NetworkManager --debug --log-level=INFO > "/tmp/nm$1.log" 2>&1 &
		nm=$!
		for i in $(seq 60); do nmcli -t general status >/dev/null 2>&1 && break; sleep 0.5; done
	}
	nm_start 1
	nmcli connection add type wireguard con-name wg2 ifname wg2 wireguard.private-key "$(wg genkey)" wireguard.listen-port 51822 ipv4.method disabled ipv6.method disabled 2>&1
	nmcli -w 30 connection up wg2 2>&1
	value nm-enabled "$(systemctl is-enabled NetworkManager.service 2>&1)"
	value wg2-mtu-before "$(cat /sys/class/net/wg2/mtu 2>&1)"
else
	value nm absent
fi

fixes() {
	echo '{"findings": ['
	echo '{"id": "udp.rcvbuf-errors", "severity": "warning", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "sysctl", "params": {"key": "net.core.'$1'", "value": "26214400"}}}]}'
	if [ "$1" = rmem_max ]; then
		echo ',{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "wg-mtu", "params": {"interface": "wg0", "mtu": "1380"}}}]}'
		echo ',{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "wg-mtu", "params": {"interface": "wg1", "mtu": "1380"}}}]}'
		echo ',{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "mss-clamp", "params": {"oif": "wg0", "mss": "pmtu"}}}]}'
		[ -z "$NM" ] || echo ',{"id": "mtu.pmtud-blackhole", "severity": "critical", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [], "action": {"kind": "wg-mtu", "params": {"interface": "wg2", "mtu": "1380"}}}]}'
	fi
	echo ']}'
}
fixes rmem_max > /tmp/kept.json
fixes wmem_max > /tmp/unconfirmed.json
step "wgperf fix --apply: net.core.rmem_max, the MTU of wg0, wg1 (and wg2), the MSS clamp of wg0"
"$W" fix --host local --from /tmp/kept.json --apply 2>&1; value fix-kept $?
step "wgperf fix --apply --confirm 10m, never confirmed: net.core.wmem_max"
"$W" fix --host local --from /tmp/unconfirmed.json --apply --confirm 10m 2>&1; value fix-unconfirmed $?
head -n 100 /etc/sysctl.d/*wgperf* /etc/nftables.conf /etc/systemd/network/50-wg0.netdev 2>&1
grep -v PrivateKey /etc/wireguard/wg1.conf
[ -z "$NM" ] || grep -H '^mtu=' /etc/NetworkManager/system-connections/wg2.nmconnection

step "the reboot: the watchdog ends, every runtime value is lost"
end_watchdogs /var/lib/wgperf/journal
sysctl -qw net.core.rmem_max=212992 net.core.wmem_max=212992
nft flush ruleset
ip link del dev wg0
ip link del dev wg1
if [ -n "$NM" ]; then
	kill "$nm"; wait "$nm" 2>/dev/null
	ip link del dev wg2
fi
value reset "$(sysctl -n net.core.rmem_max) $(sysctl -n net.core.wmem_max) $(nft list ruleset | wc -l) $(ls /sys/class/net | grep -c '^wg[012]$')"

step "boot replay: systemd-sysctl.service"
/lib/systemd/systemd-sysctl 2>&1
step "boot replay: nftables.service, when enabled"
if systemctl -q is-enabled nftables.service; then
	start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/nftables.service)
	echo "$start"; $start 2>&1
fi
step "boot replay: systemd-networkd itself (it runs without systemd as PID 1) makes the .netdev's tunnel"
mkdir -p /run/systemd/netif && chown -R systemd-network:systemd-network /run/systemd/netif
SYSTEMD_LOG_LEVEL=debug /lib/systemd/systemd-networkd > /tmp/networkd.log 2>&1 &
networkd=$!
for i in $(seq 60); do [ -e /sys/class/net/wg0 ] && break; sleep 0.5; done
sleep 1
kill "$networkd"; wait "$networkd" 2>/dev/null
grep -i 'wg0' /tmp/networkd.log
step "boot replay: wg-quick@wg1.service, when enabled (its ExecStart, %i = wg1)"
if systemctl -q is-enabled wg-quick@wg1.service; then
	start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/wg-quick@.service | sed 's/%i/wg1/g')
	echo "$start"; $start 2>&1
fi
if [ -n "$NM" ] && systemctl -q is-enabled NetworkManager.service; then
	step "boot replay: NetworkManager itself activates wg2 from its keyfile"
	nm_start 2
	for i in $(seq 60); do [ -e /sys/class/net/wg2 ] && break; sleep 0.5; done
	sleep 1
	kill "$nm"; wait "$nm" 2>/dev/null
	kill "$dbus"
	grep 'wg2' /tmp/nm2.log | grep -i 'activat\|state change' | tail -n 3
fi
step "boot replay: wgperf-fix-rollback.service, when enabled (ConditionDirectoryNotEmpty=/var/lib/wgperf/journal)"
if systemctl -q is-enabled wgperf-fix-rollback.service && [ -n "$(ls -A /var/lib/wgperf/journal 2>/dev/null)" ]; then
	"$W" $HOOK 2>&1
fi

step "after the boot"
value rmem_max "$(sysctl -n net.core.rmem_max)"
value wmem_max "$(sysctl -n net.core.wmem_max)"
value wg0-mtu "$(cat /sys/class/net/wg0/mtu)"
value wg1-mtu "$(cat /sys/class/net/wg1/mtu 2>&1)"
[ -z "$NM" ] || value wg2-mtu "$(cat /sys/class/net/wg2/mtu 2>&1)"
value mss-clamp "$(nft list table inet wgperf 2>/dev/null | grep -c 'oifname "wg0" .*maxseg size set rt mtu')"
value wmem-files "$(grep -l wmem_max /etc/sysctl.d/*.conf 2>/dev/null | wc -l)"
value rmem-file "$(grep -l rmem_max /etc/sysctl.d/*wgperf*.conf 2>/dev/null | xargs -n1 basename)"

# The Fedora/RHEL pass, in the same guest after the Debian one.
T0=$T0 sh "$FEDORA" "$W" "$REPO"
# The OpenWrt pass, after it.
T0=$T0 sh "$OPENWRT" "$W" "$REPO"
