#!/bin/sh
# Builds the router flavour of wgperf (go build -tags router: no lab, no
# embedded WireGuard; no inlining in the packages scripts/router-gcflags
# lists), stripped and static, for the CPUs
# routers have, and prints each binary's size and its gzip size (what a
# compressing overlay such as jffs2 or an .ipk holds). scripts/router-size.sh
# (make router-size) says which dependencies the bytes belong to.
# Usage: scripts/router-build.sh [VERSION]
set -eu
version="${1:-dev}"
out=bin/router
gcflags=$(sed -n 's/^\([^#].*\)/-gcflags=\1=-l/p' scripts/router-gcflags)
mkdir -p "$out"
for t in mipsle:softfloat mips:softfloat arm:7 arm64: amd64:; do
	arch=${t%%:*} variant=${t#*:}
	name=wgperf-linux-$arch${variant:+-$variant}
	case $arch in
	mips*) set -- GOMIPS="$variant" ;;
	arm) set -- GOARM="$variant" ;;
	*) set -- ;;
	esac
	# shellcheck disable=SC2086 # $gcflags is one word per pattern
	env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" "$@" \
		go build -trimpath -tags router $gcflags -ldflags "-s -w -X main.version=$version" -o "$out/$name" ./cmd/wgperf
	printf '%-32s %9d bytes  %9d gzip\n' "$name" "$(wc -c <"$out/$name")" "$(gzip -9c "$out/$name" | wc -c)"
done
