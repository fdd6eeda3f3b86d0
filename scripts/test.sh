#!/bin/sh
# Runs every test package one at a time (the root lab tests must not share the
# machine with each other) and, beside them on one core, the fuzz targets
# (scripts/fuzz.sh): lab tests mostly wait on shaped links, fuzzing is pure
# CPU, and lab verdicts hold on a busy machine (each scenario is sized to what
# the machine carries while it runs). Usage: scripts/test.sh [fuzz inputs per target]
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
FUZZ_WORKERS=1 ./scripts/fuzz.sh "${1:-20000}" >"$log" 2>&1 &
fuzz=$!
go test -count=1 -p 1 -timeout 15m ./...
tests=$?
wait "$fuzz"
fuzzed=$?
cat "$log"
[ "$fuzzed" -eq 0 ] || echo "fuzz: a target failed (above)" >&2
[ "$tests" -eq 0 ] && [ "$fuzzed" -eq 0 ]
