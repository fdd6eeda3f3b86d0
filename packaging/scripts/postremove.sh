#!/bin/sh
# wgperf .deb postrm and .rpm %postun: systemd forgets the removed unit files.
# dpkg passes "remove", "purge", "upgrade"...; rpm the number of copies left.
set -e
case "$1" in
remove | purge | 0) ;;
*) exit 0 ;;
esac
# The boot hook, as dh_installsystemd's postrm: masked while the package is
# removed (its enablement is remembered), forgotten on purge.
if command -v deb-systemd-helper >/dev/null 2>&1; then
	case "$1" in
	remove) deb-systemd-helper mask wgperf-fix-rollback.service >/dev/null || true ;;
	purge)
		deb-systemd-helper purge wgperf-fix-rollback.service >/dev/null || true
		deb-systemd-helper unmask wgperf-fix-rollback.service >/dev/null || true
		;;
	esac
fi
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
