#!/bin/sh
# wgperf .deb prerm and .rpm %preun: on removal (not on upgrade) the exporter
# stops and is disabled, as %systemd_preun does. dpkg passes "remove" or
# "upgrade", rpm the number of copies left (0 on removal).
set -e
case "$1" in
remove | 0) ;;
*) exit 0 ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl stop wgperf-exporter.service >/dev/null 2>&1 || true
fi
systemctl disable wgperf-exporter.service >/dev/null 2>&1 || true
# The boot hook: as %systemd_preun; on Debian postrm masks and purges it.
if [ "$1" = 0 ]; then
	systemctl --no-reload disable wgperf-fix-rollback.service >/dev/null 2>&1 || true
fi
exit 0
