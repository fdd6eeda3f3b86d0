#!/bin/sh
# Runs every test package one at a time (the root lab tests must not share the
# machine with each other: some set host-wide sysctls for a while) and, beside
# them at the lowest CPU priority, the work that needs only CPU: goreleaser's
# install (scripts/goreleaser.sh, a build from source on a fresh machine), the
# release packaging test (its cross-builds), then the fuzz targets
# (scripts/fuzz.sh). Lab tests mostly wait on shaped links, so that work can
# use the idle cycles, but it must not take the CPU from the lab's WireGuard
# nodes: they run in sessions of their own (setsid), and with the kernel's
# autogroup scheduling a task's nice only counts inside its session. So the
# lane gets a session too, niced as a whole (/proc/self/autogroup), and nice
# 19 where there is no autogroup. Usage: scripts/test.sh [fuzz inputs per
# target]
set -u
log=$(mktemp)
beside=
trap '[ -n "$beside" ] && kill -- "-$beside" 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
setsid -w sh -c '
	echo 19 2>/dev/null >/proc/self/autogroup
	exec nice -n 19 sh -c "./scripts/goreleaser.sh &&
		go test -count=1 -timeout 20m ./packaging &&
		./scripts/fuzz.sh \"\$1\"" - "$1"' - "${1:-20000}" >"$log" 2>&1 &
beside=$!
go test -count=1 -p 1 -timeout 15m $(go list ./... | grep -v '/packaging$')
tests=$?
wait "$beside"
besideStatus=$?
beside=
cat "$log"
[ "$besideStatus" -eq 0 ] || echo "packaging or fuzz: failed (above)" >&2
[ "$tests" -eq 0 ] && [ "$besideStatus" -eq 0 ]
