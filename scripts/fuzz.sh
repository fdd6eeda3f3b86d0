#!/bin/sh
# Runs every Fuzz* target in the module briefly (go test -fuzz takes one target
# per run). Usage: scripts/fuzz.sh [duration per target, default 5s]
set -eu
t="${1:-5s}"
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "fuzz $pkg $f ($t)"
		go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg" >/dev/null
	done
done
