#!/bin/sh
# Installs what "wgperf lab vm" needs to boot a kernel with the WireGuard
# module on this machine's own files, only what is missing:
#   - Debian's distro kernel (linux-image-amd64: wireguard, sch_netem), without
#     an initramfs (virtme-ng builds its own; skipping it saves most of the
#     install's time);
#   - QEMU and a static BusyBox (qemu-system-x86, busybox-static; the lab's
#     router node uses that BusyBox too);
#   - virtme-ng (PyPI) in a virtualenv of its own, linked into /usr/local/bin;
#   - virtiofsd (crates.io), where cargo is there: the guest then reads the
#     host's files through virtio-fs with the page cache, and a program starts
#     several times faster than over 9p, which virtme-ng falls back to.
# Idempotent; needs root (or sudo) on Debian/Ubuntu.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
vng_version=1.42
virtiofsd_version=1.14.0

need=""
command -v qemu-system-x86_64 >/dev/null 2>&1 || need="$need qemu-system-x86"
busybox_static() { [ -x /bin/busybox ] && file_static /bin/busybox; }
file_static() { ! grep -q 'ld-linux' "$1" 2>/dev/null; }
busybox_static || need="$need busybox-static"
ls /lib/modules/*/kernel/drivers/net/wireguard/wireguard.ko* >/dev/null 2>&1 && ls /boot/vmlinuz-* >/dev/null 2>&1 ||
	need="$need linux-image-amd64"
if [ -n "$need" ]; then
	echo "installing:$need" >&2
	$SUDO apt-get update -qq
	# INITRD=No: Debian's kernel hook skips the initramfs, which the guest never uses.
	$SUDO env DEBIAN_FRONTEND=noninteractive INITRD=No apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

if ! /usr/local/bin/vng --version 2>/dev/null | grep -q "$vng_version"; then
	echo "installing: virtme-ng $vng_version (pip, in /usr/local/lib/wgperf-vng)" >&2
	$SUDO python3 -m venv /usr/local/lib/wgperf-vng 2>/dev/null || {
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
		$SUDO python3 -m venv /usr/local/lib/wgperf-vng
	}
	$SUDO /usr/local/lib/wgperf-vng/bin/pip install -q "virtme-ng==$vng_version"
	$SUDO ln -sf /usr/local/lib/wgperf-vng/bin/vng /usr/local/bin/vng
fi

if ! /usr/local/bin/virtiofsd --version 2>/dev/null | grep -q "$virtiofsd_version"; then
	if command -v cargo >/dev/null 2>&1; then
		echo "installing: virtiofsd $virtiofsd_version (cargo, into /usr/local/bin)" >&2
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libseccomp-dev libcap-ng-dev >/dev/null
		$SUDO cargo install -q --locked --root /usr/local virtiofsd --version "$virtiofsd_version"
	else
		echo "no cargo: lab vm reads this machine's files over 9p (slower to start programs)" >&2
	fi
fi
