#!/bin/sh
# wgperf .deb postrm and .rpm %postun: systemd forgets the removed unit files.
# dpkg passes "remove", "purge", "upgrade"...; rpm the number of copies left.
set -e
case "$1" in
remove | purge | 0) ;;
*) exit 0 ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
