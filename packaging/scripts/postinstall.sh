#!/bin/sh
# wgperf .deb postinst and .rpm %post, as dh_installsystemd and
# %systemd_post do it for a unit that is not enabled by default: systemd
# learns of the new unit files, and on upgrade an exporter that runs restarts
# on the new binary. dpkg passes "configure OLD-VERSION" ("configure" alone on
# a first install), rpm the number of installed copies (2 on upgrade).
set -e
upgrade=
case "$1" in
configure) [ -n "$2" ] && upgrade=1 ;;
[0-9]*) [ "$1" -ge 2 ] && upgrade=1 ;;
*) exit 0 ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
	if [ -n "$upgrade" ]; then
		systemctl try-restart wgperf-exporter.service >/dev/null || true
	fi
fi
exit 0
