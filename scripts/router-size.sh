#!/bin/sh
# Prints where the router build's bytes go, by dependency: builds wgperf with
# -tags router for linux/mipsle softfloat (GOARCH, GOMIPS and GOARM override)
# with symbols, as router-build.sh does minus -s -w (with the gcflags of
# scripts/router-gcflags), and hands the binary to
# scripts/router-size.go, which groups its symbols by module (standard
# library by area, wgperf by package) and prints a markdown table. Given a
# git revision, it builds that too and prints the two side by side.
# Usage: scripts/router-size.sh [REV]    e.g. scripts/router-size.sh HEAD~3
set -eu
cd "$(dirname "$0")/.."
# The router build's flags, from this tree (also for REV, so the columns compare code).
gcflags=$(sed -n 's/^\([^#].*\)/-gcflags=\1=-l/p' scripts/router-gcflags)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build() { # build SRC-DIR OUT
	# shellcheck disable=SC2086 # $gcflags is one word per pattern
	(cd "$1" && env CGO_ENABLED=0 GOOS=linux GOARCH="${GOARCH:-mipsle}" GOMIPS="${GOMIPS:-softfloat}" GOARM="${GOARM:-7}" \
		go build -trimpath -tags router $gcflags -o "$2" ./cmd/wgperf)
}

bins=
if [ $# -gt 0 ]; then
	mkdir "$tmp/src"
	git archive "$1" | tar -x -C "$tmp/src"
	build "$tmp/src" "$tmp/$1"
	bins="$tmp/$1"
fi
build . "$tmp/this tree"
# shellcheck disable=SC2086 # $bins is one path without spaces, or nothing
go run scripts/router-size.go $bins "$tmp/this tree"
echo "(${GOARCH:-mipsle}; stripped, the file is the total plus ELF headers: make router prints the real sizes)"
