#!/bin/sh
# Installs the system tools wgperf's lab and tests use, with apt, only when one
# is missing. Idempotent; needs root (or sudo) on Debian/Ubuntu.
set -eu
need=""
check() { command -v "$1" >/dev/null 2>&1 || need="$need $2"; }
check iperf3 iperf3
check nft nftables
check wg wireguard-tools
check tcpdump tcpdump
check /usr/sbin/sshd openssh-server
check ssh openssh-client
check ethtool ethtool
check conntrack conntrack
check iptables iptables
check ping iputils-ping
check ip iproute2
check tc iproute2
check sysctl procps
check promtool prometheus
check chromium chromium
# The man page test checks the roff with groff.
check groff groff-base
# The lab's OpenWrt-like router node (lab up --router): BusyBox (static, which
# lab vm's guest needs too) and dropbear.
check busybox busybox-static
check /usr/sbin/dropbear dropbear-bin
check dropbearkey dropbear-bin
# lab vm: a kernel with the WireGuard module under QEMU (scripts/vm-deps.sh).
[ -z "$need" ] && exec "$(dirname "$0")/vm-deps.sh"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing:$need" >&2
# Packages like prometheus (for promtool) would start their daemon on install;
# the tests need only the tools, so keep services from starting meanwhile.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
	$SUDO chmod +x "$policy"
	trap '$SUDO rm -f "$policy"' EXIT
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
"$(dirname "$0")/vm-deps.sh"
