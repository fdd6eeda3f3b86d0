#!/bin/sh
# Runs every test package one at a time (the root lab tests must not share the
# machine with each other: some set host-wide sysctls for a while) and, beside
# them on one core, the work that needs only CPU: the fuzz targets
# (scripts/fuzz.sh), then the release packaging test (goreleaser
# cross-builds). Lab tests mostly wait on shaped links, and their verdicts
# hold on a busy machine (each scenario is sized to what the machine carries
# while it runs). Usage: scripts/test.sh [fuzz inputs per target]
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(FUZZ_WORKERS=1 ./scripts/fuzz.sh "${1:-20000}" &&
	GOFLAGS=-p=1 WGPERF_RELEASE_PARALLELISM=1 go test -count=1 -p 1 ./packaging) >"$log" 2>&1 &
beside=$!
go test -count=1 -p 1 -timeout 15m $(go list ./... | grep -v '/packaging$')
tests=$?
wait "$beside"
besideStatus=$?
cat "$log"
[ "$besideStatus" -eq 0 ] || echo "fuzz or packaging: failed (above)" >&2
[ "$tests" -eq 0 ] && [ "$besideStatus" -eq 0 ]
