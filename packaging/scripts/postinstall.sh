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
# The boot hook that rolls back unconfirmed fixes is enabled the
# distribution's way, so "systemctl is-enabled" tells the truth and
# "systemctl disable" sticks: deb-systemd-helper on Debian (as
# dh_installsystemd's postinst: enabled on first install, an owner's disable
# kept on upgrade), the preset (90-wgperf.preset) on a first rpm install (as
# %systemd_post).
case "$1" in
configure)
	if command -v deb-systemd-helper >/dev/null 2>&1; then
		deb-systemd-helper unmask wgperf-fix-rollback.service >/dev/null || true
		if deb-systemd-helper --quiet was-enabled wgperf-fix-rollback.service; then
			deb-systemd-helper enable wgperf-fix-rollback.service >/dev/null || true
		else
			deb-systemd-helper update-state wgperf-fix-rollback.service >/dev/null || true
		fi
	fi
	;;
1) systemctl --no-reload preset wgperf-fix-rollback.service >/dev/null 2>&1 || true ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
	if [ -n "$upgrade" ]; then
		systemctl try-restart wgperf-exporter.service >/dev/null || true
	fi
fi
exit 0
