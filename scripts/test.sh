#!/bin/sh
# Runs every test package one at a time (the root lab tests must not share the
# machine with each other: some set host-wide sysctls for a while) and, beside
# them at the lowest CPU priority, the work that needs only CPU: goreleaser's
# install (scripts/goreleaser.sh, a build from source on a fresh machine), the
# release packaging test (its cross-builds), then the fuzz targets
# (scripts/fuzz.sh). Lab tests mostly wait on shaped links; nice 19 lets that
# work use every idle cycle while the lab's WireGuard nodes and iperf3 still
# get the CPU whenever they want it. Usage: scripts/test.sh [fuzz inputs per
# target]
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
nice -n 19 sh -c '
	./scripts/goreleaser.sh &&
	go test -count=1 -timeout 20m ./packaging &&
	./scripts/fuzz.sh "$1"' - "${1:-20000}" >"$log" 2>&1 &
beside=$!
go test -count=1 -p 1 -timeout 15m $(go list ./... | grep -v '/packaging$')
tests=$?
wait "$beside"
besideStatus=$?
cat "$log"
[ "$besideStatus" -eq 0 ] || echo "packaging or fuzz: failed (above)" >&2
[ "$tests" -eq 0 ] && [ "$besideStatus" -eq 0 ]
