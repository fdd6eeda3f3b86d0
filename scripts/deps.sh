#!/bin/sh
# Installs the system tools one part of wgperf's work needs, only what is
# missing, and says what it installs and about how long that takes:
#
#   scripts/deps.sh lab     the built-in lab (make demo): iperf3, nftables,
#                           wireguard-tools, tcpdump, ethtool, conntrack,
#                           iptables, ping, iproute2, procps (apt, ~30 s)
#   scripts/deps.sh test    what the tests use beyond the lab: ssh client and
#                           server, groff, BusyBox and dropbear for the router
#                           node, chromium (screenshots of the HTML report),
#                           lintian, rpm and rpmlint (the packages' checks), promtool and
#                           the Prometheus server, never enabled (apt, ~2 min)
#   scripts/deps.sh guest   what lab vm needs for kernel WireGuard in a guest
#                           (scripts/vm-deps.sh: qemu, a distro kernel,
#                           virtme-ng, virtiofsd; ~4 min)
#
# Several sets may be named at once. Nothing is enabled or started at boot:
# promtool is unpacked from Debian's prometheus package, not installed with
# the server and its unit. Needs root (or sudo) on Debian/Ubuntu.
set -eu
here=$(dirname "$0")
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

need=""
check() { command -v "$1" >/dev/null 2>&1 || need="$need $2"; }
lab() {
	check iperf3 iperf3
	check nft nftables
	check wg wireguard-tools
	check tcpdump tcpdump
	check ethtool ethtool
	check conntrack conntrack
	check iptables iptables
	check ping iputils-ping
	check ip iproute2
	check tc iproute2
	check sysctl procps
}
test_tools() {
	check /usr/sbin/sshd openssh-server
	check ssh openssh-client
	check chromium chromium
	# The man page test checks the roff with groff.
	check groff groff-base
	# The lab's OpenWrt-like router node (lab up --router): BusyBox and dropbear.
	check busybox busybox
	check /usr/sbin/dropbear dropbear-bin
	check dropbearkey dropbear-bin
	# The release packaging test: lintian on the .deb, rpm -qp and rpmlint on the .rpm.
	check lintian lintian
	check rpm rpm
	check rpmlint rpmlint
}

[ $# -gt 0 ] || set -- lab
guest=""
for set in "$@"; do
	case "$set" in
	lab) lab ;;
	test) test_tools ;;
	guest) guest=1 ;;
	*)
		echo "deps.sh: unknown set $set (want lab, test or guest)" >&2
		exit 2
		;;
	esac
done

if [ -n "$need" ]; then
	need=$(echo "$need" | tr ' ' '\n' | sort -u | tr '\n' ' ')
	echo "installing with apt (about $(( $(echo "$need" | wc -w) * 5 + 20 )) s):$need" >&2
	# Packages like openssh-server would start their daemon on install; the
	# tests need only the programs, so keep services from starting meanwhile.
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
		$SUDO chmod +x "$policy"
		trap '$SUDO rm -f "$policy"' EXIT
	fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

case " $* " in *" test "*)
	if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
		# Only the programs (promtool checks the alerts; the server proves
		# that Prometheus discovers an inventory's targets): the package
		# would also enable a server at boot, which nothing here wants.
		echo "installing: promtool and prometheus, unpacked from Debian's prometheus package into /usr/local/bin (about 20 s)" >&2
		tmp=$(mktemp -d)
		(cd "$tmp" && { apt-get download prometheus >/dev/null 2>&1 || { $SUDO apt-get update -qq && apt-get download prometheus >/dev/null 2>&1; }; })
		dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root"
		$SUDO install -m 0755 "$tmp/root/usr/bin/promtool" "$tmp/root/usr/bin/prometheus" /usr/local/bin/
		rm -rf "$tmp"
	fi
	;;
esac

[ -z "$guest" ] || "$here/vm-deps.sh"
