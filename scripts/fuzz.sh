#!/bin/sh
# Runs every Fuzz* target in the module briefly (go test -fuzz takes one target
# per run). Usage: scripts/fuzz.sh [inputs per target, default 20000]
#
# The budget is a count of inputs ("20000x"), not a duration: a wall-clock
# -fuzztime can end in "context deadline exceeded" on a loaded machine without
# any failing input (golang/go#51484), which would make the gate flaky. A real
# finding is printed and written to testdata/fuzz/<target>/ for `go test` to
# replay. FUZZ_WORKERS limits the fuzzing processes (and builds) per target
# (default: one per CPU), so the fuzzers can share the machine with the tests.
set -eu
n="${1:-20000}"
workers=""
[ -n "${FUZZ_WORKERS:-}" ] && workers="-p $FUZZ_WORKERS -parallel $FUZZ_WORKERS"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "fuzz $pkg $f (${n} inputs)"
		if ! go test $workers -run '^$' -fuzz "^$f\$" -fuzztime "${n}x" "$pkg" >"$log" 2>&1; then
			cat "$log"
			exit 1
		fi
	done
done
