#!/bin/sh
# Installs what the release build needs, with go install, when the pinned
# version is not there yet: goreleaser (make release-snapshot, and the
# packaging test that checks every artifact) and minisign (the signature of
# checksums.txt; the test signs with a throw-away key and verifies). Go builds
# them from source: minutes on a fresh machine, so make test runs this beside
# the lab tests, not before them.
set -eu
goreleaser=v2.15.1
minisign=v0.3.0
gobin=$(go env GOPATH)/bin
if ! "$gobin/goreleaser" --version 2>/dev/null | grep -q "${goreleaser#v}"; then
	echo "installing: goreleaser $goreleaser (go install)" >&2
	go install "github.com/goreleaser/goreleaser/v2@$goreleaser"
fi
if ! "$gobin/minisign" -v 2>/dev/null | grep -q "${minisign#v}"; then
	echo "installing: minisign $minisign (go install)" >&2
	go install "aead.dev/minisign/cmd/minisign@$minisign"
fi
